"""The input/output layer: scenario files (CSV, JSON, Parquet streamed with pyarrow), result tables, benchmark
files turned into curves, downloadable documents. Sits above the studies, below the CLI and the app.
"""
