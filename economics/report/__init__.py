"""The board report: one scenario as a PDF of one to three pages (KPIs, charts, sourced assumptions, tornado,
derivation, reproducing link), from the command line (``python -m economics report``) and the app's pages.

:mod:`.build` makes a report, :mod:`.document` typesets it (Vega-Lite SVG through vl-convert, Typst), :mod:`.figures`
words the engine's figures, :mod:`.kpis` and :mod:`.charts` are the pages' own KPIs and chart specs (shared with the
app), :mod:`.format` the display rules. Needs the ``report`` extra (typst, vl-convert-python, altair).
"""
