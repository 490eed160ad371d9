"""The vocabulary of answer confidence: the signals a search measures, and the calibration states a response names.

``answer_confidence`` is P(the top hit's page is judged relevant), a logistic regression over these signals
(optionally followed by an isotonic map), its coefficients in the policy's ``[match]`` section
(query/answer_confidence.py computes both).  Every signal is a number a search already has, in a range that
does not depend on the corpus size.  All but one read what the search found; ``unknown_term_share`` reads the
query alone against the snapshot's vocabulary (is the query about this library's subject at all?).
"""

from __future__ import annotations

BEST_COSINE = "best_cosine"
PAGE_MARGIN = "page_margin"
TERM_COVERAGE = "term_coverage"
CHANNELS_AGREE = "channels_agree"
LEXICAL_STRENGTH = "lexical_strength"
TOP_PAGE_LEXICAL_RR = "top_page_lexical_rr"
UNKNOWN_TERM_SHARE = "unknown_term_share"

SIGNALS: dict[str, str] = {
    BEST_COSINE: "the best raw cosine between the query and any passage",
    PAGE_MARGIN: "that best cosine minus the best cosine of the next distinct page (identical passages on other "
    "pages, such as a versioned copy, do not count as competitors)",
    TERM_COVERAGE: "the share of the query's IDF-weighted terms that the top 3 hits contain (unknown terms count)",
    CHANNELS_AGREE: "1 when the dense and the lexical channel rank the same page first, else 0",
    LEXICAL_STRENGTH: "the best BM25 score saturated as s / (s + bm25_half), 0 when no query term is known",
    TOP_PAGE_LEXICAL_RR: "1 / the lexical channel's rank of the top hit's page (its best passage), 0 when absent",
    UNKNOWN_TERM_SHARE: "the share of the query's IDF-weighted terms that no passage of the snapshot uses: whether the "
    "query is in the library's vocabulary at all, whatever the hits (0 when it has no terms)",
}

# What `trustindex calibrate` fits on unless told otherwise: of the subsets of SIGNALS, the one with the lowest Brier
# score and ECE in repeated 5-fold cross-validation on the dev half of bench/eval (`bench/fit_default_calibration.py
# --dev-cv` ranks them; the others stay in the response, so an operator can fit on them: --features).  Ranked first
# of 127 (dev Brier 0.0584, ECE 0.031; the set before unknown_term_share existed: 41st, 0.0650, 0.042); it changes
# with the shipped calibration's refit, never apart from it.
DEFAULT_FEATURES = (BEST_COSINE, TERM_COVERAGE, LEXICAL_STRENGTH, TOP_PAGE_LEXICAL_RR, UNKNOWN_TERM_SHARE)

# "default": the calibration the package ships (fitted on the project's judged real-docs set); "operator": one
# fitted by `trustindex calibrate` on the operator's own labels; "uncalibrated": the policy has no model.
DEFAULT, OPERATOR, UNCALIBRATED = "default", "operator", "uncalibrated"
CALIBRATION_STATUSES = (DEFAULT, OPERATOR, UNCALIBRATED)

# A response that abstains because its answer confidence is below the policy's min_answer_confidence.
LOW_CONFIDENCE = "low_confidence"
