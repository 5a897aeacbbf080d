"""Token economics calculator — Streamlit entry point (`streamlit run app.py`).

A router only: each page lives in ui/ and every number comes from the `economics` package. Every page is a lens on
one working scenario held in the session (ui/state.py), so moving between pages never changes a value.

Read twice: `streamlit run app.py` finds :data:`app` (Streamlit's ``st.App``, by reading this file's syntax) and serves
this file through it, importing it once as a module at the server's start; every session then runs it as its script
(``__main__``, as ``streamlit.testing`` does), which draws the page.
"""

from urllib.parse import quote

import streamlit as st
from starlette.middleware import Middleware

from ui import assets, memory

if __name__ != "__main__":
    # The server's start, before any browser connects: its lifespan imports the first page's modules and evaluates
    # its default scenario in the background while the browser loads Streamlit's page (issue #43: about 1 s of CPU
    # that the first run would otherwise spend after the browser connects; ui/memory.py).
    # Its middleware answers the page's static files from memory, sparing the preload's interpreter Starlette's file
    # handling, and names the first page's frontend code in Streamlit's page, so the browser fetches it during the
    # first run rather than after the KPI arrives (ui/assets.py).
    app = st.App("app.py", lifespan=memory.preload,
                 middleware=[Middleware(assets.HeldPageFiles), Middleware(assets.FirstPageChunks)])
else:
    from streamlit import delta_generator, runtime

    from economics import store
    from ui import ahead, state

    # Streamlit checks, at the first element a process draws, that it is not run from a Python prompt: inspect.stack()
    # reads the source of every frame and looks up the module of each among every module loaded, 70 ms of CPU with the
    # app's 1,700 modules (load 16) before the first KPI of a cold start (issue #43). Under a server (a runtime exists)
    # the answer is known, no prompt, so the check is marked done; run bare (`python app.py`), its warning still shows.
    if runtime.exists():
        delta_generator._use_warning_has_been_displayed = True

    # An emoji favicon (drawn locally): a ":material/...:" icon makes the browser fetch it from a Google CDN, and page
    # icons would replace it. It is given as the SVG Streamlit's page draws for an emoji icon (its frontend turns
    # "emoji:🧮" into exactly this document), percent-encoded so the text is ASCII: Streamlit then takes it as a URL and
    # never loads its emoji table to check that the icon is an emoji (a regular expression compiled at the first page's
    # set_page_config: 30-55 ms of CPU before the first KPI of a cold start, issue #43; the URL path loads PIL instead,
    # 10-13 ms).
    FAVICON = "data:image/svg+xml," + quote("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'><text "
                                            "y='.9em' font-size='90'>🧮</text></svg>", safe="")
    # On a session's first run only: the browser keeps the title, icon and layout for the session, and sent on every
    # run the message delayed each run's KPIs by one of Streamlit's 5 ms flushes (docs/speed.md; browser test).
    if "_page_config_sent" not in st.session_state:
        st.set_page_config(page_title="Token economics", page_icon=FAVICON, layout="wide")
        st.session_state["_page_config_sent"] = True

    store.use_stored_curves()  # a link naming a curve file kept in the store resolves after a restart

    PAGES = [
        st.Page("ui/cost.py", title="Cost per token", default=True),
        st.Page("ui/fleet.py", title="Fleet", url_path="fleet"),
        st.Page("ui/sessions.py", title="Sessions", url_path="sessions"),
        st.Page("ui/decode.py", title="Decode accelerators", url_path="decode"),
        st.Page("ui/plan.py", title="Plan", url_path="plan"),
        st.Page("ui/throughput.py", title="Throughput", url_path="throughput"),
        st.Page("ui/uncertainty.py", title="Uncertainty", url_path="uncertainty"),
        st.Page("ui/scenarios.py", title="Scenarios", url_path="scenarios"),
        st.Page("ui/library.py", title="Library", url_path="library"),
        st.Page("ui/data.py", title="Data", url_path="data"),
    ]
    page = st.navigation(PAGES)
    memory.until_first_page()  # a cold start's first run: the preload's evaluation is not made twice at once
    with memory.running():  # the server's preload of the Plan page waits while a run is under way (ui/memory.py)
        try:
            page.run()
        finally:  # a page that drew no editor: the URL is written now (see ui.state)
            state.sync_url()
            ahead.after_run()  # the Cost and Fleet pages' studies of this state, made once no run is under way
    memory.freeze_once()
