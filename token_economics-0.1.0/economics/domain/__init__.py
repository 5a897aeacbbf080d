"""The domain layer: small pure formulas over floats or arrays, units in their names (finance, cost, capacity,
fleet, revenue, throughput, queueing, availability, the model architecture's KV and weight sizes, the formula
objects every derivation is rendered from). Imports only the catalog and schemas above the package root's data.
"""
