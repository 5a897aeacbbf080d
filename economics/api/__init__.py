"""The HTTP API (``token-economics serve``, the ``[api]`` extra): the CLI's commands as JSON endpoints under
``/v1``, the same numbers, with limits, a time limit on every computation, an optional bearer token and one error
shape. :func:`economics.api.app.create_app` builds the FastAPI application; :mod:`economics.api.serve` runs it on
uvicorn. Nothing here imports FastAPI until the application is built, so the CLI runs without the extra.
"""
