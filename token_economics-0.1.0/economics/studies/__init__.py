"""The studies layer: questions asked of the engine (compare accelerators, the retrofit decode study, uncertainty,
interactivity, sweeps, links, calibration, the fleet planner). Studies read and write no files; :mod:`economics.io`
does.
"""
