"""The answer-confidence calibration, fitted from judged queries (scikit-learn, the [build] extra): the judged-query
files and their fixed dev/test split (``judged``), the fit (``fit``) and its text (``text``).  Applying a
calibration at query time is the search library's (``query.answer_confidence``)."""
