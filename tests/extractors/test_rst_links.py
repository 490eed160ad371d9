"""A reStructuredText page's links and the names it defines (extractors/rst_links.py): Sphinx's roles with and
without titles, hyperlinks, labels and documented objects, and nothing read inside literal text."""

from __future__ import annotations

from trustindex.extractors.rst_links import rst_links
from trustindex.schemas.links import DOC_ROLE, LABEL, MARKDOWN, OBJECT, OBJECT_ROLE, REF_ROLE

PAGE = """\
.. _quickstart:

Quickstart
==========

Install it first (:doc:`installation`), then see :doc:`the tutorial </tutorial/index>`
and :ref:`url-building`.  Routes are made with :meth:`~flask.Flask.route`; :func:`flask.url_for`
builds them, :py:class:`Flask` runs them and :func:`!not_a_link` is only text.

Read the `HTTP RFC <https://www.ietf.org/rfc/rfc2068.txt>`_ or `Jinja`_, never ``:doc:`literal```.

.. _Jinja: https://jinja.palletsprojects.com/

Example::

    :doc:`inside a literal block`

.. code-block:: rst

    :ref:`inside code`

.. note::

   Also :ref:`Debug mode <debug-mode>` and :file:`app.py`.

.. module:: flask

.. autoclass:: Flask
   :members:

.. autofunction:: flask.url_for

.. currentmodule:: flask.json

.. function:: dumps(obj, **kwargs)
"""


def test_roles_hyperlinks_and_their_anchor_texts():
    links, _names = rst_links(PAGE)
    got = [(link.kind, link.text, link.target, link.line) for link in links]
    assert got == [
        (DOC_ROLE, "", "installation", 6),
        (DOC_ROLE, "the tutorial", "/tutorial/index", 6),
        (REF_ROLE, "", "url-building", 7),
        (OBJECT_ROLE, "route", "flask.Flask.route", 7),  # ~ shows the last name
        (OBJECT_ROLE, "flask.url_for", "flask.url_for", 7),
        (OBJECT_ROLE, "Flask", "Flask", 8),
        (MARKDOWN, "HTTP RFC", "https://www.ietf.org/rfc/rfc2068.txt", 10),
        (MARKDOWN, "Jinja", "https://jinja.palletsprojects.com/", 10),  # a named reference to the page's target
        (REF_ROLE, "Debug mode", "debug-mode", 24),  # a directive's content is text; :file: names no page
    ]


def test_names_the_page_defines_for_other_pages_roles():
    _links, names = rst_links(PAGE)
    assert [(n.kind, n.name, n.line) for n in names] == [
        (LABEL, "quickstart", 1),  # the Jinja target names a URL, not a section
        (OBJECT, "flask", 26),
        (OBJECT, "Flask", 28),
        (OBJECT, "flask.Flask", 28),
        (OBJECT, "flask.url_for", 31),
        (OBJECT, "dumps", 35),
        (OBJECT, "flask.json.dumps", 35),
    ]


def test_a_page_without_roles_has_no_links_and_bad_markup_fails_nothing():
    assert rst_links("Title\n=====\n\nPlain text.\n") == ([], [])
    links, names = rst_links(":doc:`unclosed\n.. _:\n.. autoclass::\n:ref:`` ``\n`<>`_\n")
    assert names == [] and all(link.target for link in links)
