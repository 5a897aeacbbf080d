"""Streamlit pages. Thin views: collect inputs, call :mod:`economics`, draw results. No economics here."""
