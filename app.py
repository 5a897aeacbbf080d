"""Token economics calculator — Streamlit entry point (`streamlit run app.py`).

A router only: each page lives in ui/ and every number comes from the `economics` package. Every page is a lens on
one working scenario held in the session (ui/state.py), so moving between pages never changes a value.
"""

import streamlit as st

# Emoji icons only: a ":material/...:" page icon makes the browser fetch the favicon from a Google CDN.
st.set_page_config(page_title="Token economics", page_icon="🧮", layout="wide")

PAGES = [
    st.Page("ui/cost.py", title="Cost per token", icon="💵", default=True),
    st.Page("ui/fleet.py", title="Fleet", icon="🗄️", url_path="fleet"),
    st.Page("ui/decode.py", title="Decode accelerators", icon="🔀", url_path="decode"),
    st.Page("ui/throughput.py", title="Throughput", icon="⚡", url_path="throughput"),
    st.Page("ui/uncertainty.py", title="Uncertainty", icon="📈", url_path="uncertainty"),
    st.Page("ui/scenarios.py", title="Scenarios", icon="📋", url_path="scenarios"),
    st.Page("ui/data.py", title="Data", icon="📚", url_path="data"),
]
st.navigation(PAGES).run()
