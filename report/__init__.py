"""The HTML report of a run (``trustindex report --html``): its data from the catalog (``data``), its plots
(``plots``), the page (``html``) and the calibration's section (``calibration``)."""
