"""The scenario contract: what every input and output is, how a cell is read, and what makes a row valid.

One concept, the schema, in the modules every layer above reads:

- :mod:`economics.schema.values`: the one value parser (a cell, a link parameter, a JSON value);
- :mod:`economics.schema.scenario`: the scenario's fields (names, units, bounds, defaults, groups) and ``Scenario``;
- :mod:`economics.schema.outputs`: the output columns, their units and the row warnings;
- :mod:`economics.schema.day_profiles`: the hours of a day as 24 values;
- :mod:`economics.schema.user_curves`: a user's measured curve files, read with the scenario's fields;
- :mod:`economics.schema.validation` (with ``validation_hours`` and ``validation_sessions``): a table of scenarios
  checked column-wise, every problem named by field, row and value;
- :mod:`economics.schema.presets`: the ready-made scenarios.

It sits above :mod:`economics.catalog` (defaults and catalog ids come from the sourced tables) and below the domain.
"""
