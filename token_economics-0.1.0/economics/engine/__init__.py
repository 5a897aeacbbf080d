"""The engine layer: a scenario resolved against the catalog, its throughput estimated (measured curves, the
roofline, the replica search), the stages of formulas evaluated row-wise, and the batch entry points
(:func:`economics.evaluate`, :func:`economics.explain_text`). Imports the domain layer and the schemas.
"""
