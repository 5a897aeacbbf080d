"""What every page shares: cached evaluation, KPIs with deltas against the baseline, tables formatted from the
output schema, the baseline controls, the share link and the measured-speed check. Presentation only."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

import streamlit as st

import economics
from economics import FIELDS, catalog
from economics.report import kpis
from economics.schema.outputs import OUTPUTS, label, names
from economics.schema.outputs import DisplayFormat as Show
from ui import format as fmt
from ui import links, state
from ui.editor import label as field_label
from ui.editor import section
from ui.text import headed, html_table, plain


def canonical(scenario: Mapping[str, Any]) -> str:
    """A scenario as a cache key."""
    return json.dumps(dict(scenario), sort_keys=True, default=str)


@st.cache_data(max_entries=1024, show_spinner=False)
def _evaluate(key: str) -> dict[str, Any]:
    return economics.evaluate_scenario(json.loads(key))


def evaluate(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`economics.evaluate_scenario`, cached per scenario (raises its ScenarioError)."""
    return _evaluate(canonical(scenario))


@st.cache_data(max_entries=256, show_spinner=False)
def _explanation(key: str) -> str:
    return economics.explain_text(json.loads(key))


def explanation(scenario: Mapping[str, Any], key: str) -> None:
    """The derivation (every output with the numbers substituted), on request only: it is the slowest part of a
    run, so it is written out when the toggle is on, and cached per scenario."""
    if st.toggle("How this is computed", key=key,
                 help="Every output with the scenario's numbers substituted, and where each input comes from"):
        st.code(_explanation(canonical(scenario)), language=None)


def draw(spec: Mapping[str, Any], datasets: Mapping[str, Any] | None = None) -> None:
    """A chart from :func:`economics.report.charts.vega_spec` (with these datasets added), as wide as its column."""
    st.vega_lite_chart(spec={**spec, "datasets": {**spec.get("datasets", {}), **(datasets or {})}}, width="stretch")


def heading(title: str, *notes: str) -> None:
    """A subheader and the caption(s) under it as one Markdown element (:func:`ui.text.headed`): the heading at
    ``st.subheader``'s level and each note a paragraph in small grey type, as ``st.caption`` writes it. One element
    instead of two or more, as the browser mounts and redraws every element of a page on each switch and each run
    (docs/speed.md, ``pagelean``). For the page's own text (see there)."""
    st.markdown(headed(title, *notes))


def panel(label: str, name: str, opened: bool = False) -> Any | None:
    """An expander whose content is drawn only while it is open (Streamlit's lazy expander: opening it reruns the
    page), or None while it is closed: what a panel holds is then never sent, mounted or redrawn by the browser on a
    switch or a run. It is open when the page setting ``open`` names it (:data:`ui.links.PANELS`; so the link opens
    it), or when ``opened`` (the page needs it open)."""
    key = f"panel_{name}"
    st.session_state[key] = opened or name in state.settings()["open"]
    box = st.expander(label, key=key, on_change=_panel_changed, args=(name,))
    return box if box.open else None


def _panel_changed(name: str) -> None:
    now = set(state.settings()["open"]) - {name} | ({name} if st.session_state.get(f"panel_{name}") else set())
    state.set_setting("open", tuple(p for p in links.PANELS if p in now))


def baseline_result() -> dict[str, Any] | None:
    """The pinned baseline, evaluated (None without one, or if it does not evaluate)."""
    pinned = state.baseline()
    if pinned is None:
        return None
    try:
        return evaluate(pinned)
    except economics.ScenarioError as error:
        st.warning(f"The baseline cannot be evaluated, so no KPI shows a change against it: "
                   f"{plain(str(error), max_chars=600)}")
        return None


SPEED = fmt.SPEED
"""The throughput the engine used (an input it fills when empty), shown as a KPI like an output."""


def metric(where: Any, name: str, result: Mapping[str, Any], base: Mapping[str, Any] | None,
           title: str | None = None, value: str | None = None) -> None:
    """One KPI from the output schema (:func:`economics.report.format.kpi`, the rule the board report prints
    too): its label, its value in its display format, and the change against the baseline (percentage points for
    percentages) coloured the good way. An estimated throughput's KPI gives, under its value, the estimate's range
    in small grey type (the metric's own description line, wrapped by ui/assets.py's style rather than cut), and
    what that range is in its tooltip: one element, where a container, the metric and a caption were three, as the
    browser mounts every element on a switch and redraws it on each run (docs/speed.md, ``switch5``)."""
    k = fmt.kpi(name, result, base, title, value)
    low, high = result.get(f"{name}_low"), result.get(f"{name}_high")
    ranged = low is not None and high is not None and f"{name}_low" in OUTPUTS
    note = plain(f"Estimate's range (P10-P90): {fmt.output(name, low)} to {fmt.output(name, high)}") if ranged \
        else None
    where.metric(k.title, k.value, delta=k.change, delta_color=k.color, delta_arrow="off" if k.same else "auto",
                 help=f"{k.help} {RANGE_HELP}" if ranged else k.help, delta_description=note)


RANGE_HELP = ("Its range (P10-P90, under the value): the throughput is estimated, and the same stages run at its P10 "
              "and P90 (the throughput line on this page says on which measured points that range rests).")
"""The tooltip's words on an estimated KPI's range (:func:`metric`)."""


def row() -> Any:
    """A row of KPIs or buttons, side by side and wrapping on a narrow screen: one horizontal container rather than
    ``st.columns`` (a block per column), as the browser redraws every block of the page when a run starts."""
    return st.container(horizontal=True, gap="medium")


def kpi_row(items: Sequence[str | tuple[str, str]], result: Mapping[str, Any],
            base: Mapping[str, Any] | None) -> None:
    """A row of KPIs: output names, or (output name, title)."""
    where = row()
    for item in items:
        name, title = (item, None) if isinstance(item, str) else item
        metric(where, name, result, base, title=title)


def baseline_controls() -> None:
    """Pin the working scenario as the baseline, or clear it; the baseline's name as plain text. The button alone
    is drawn without a row around it (one element fewer for the browser on every switch and run)."""
    pinned = state.baseline()
    where = st if pinned is None else st.container(horizontal=True, vertical_alignment="center")
    where.button("Pin as baseline", key="pin_baseline", on_click=state.pin_baseline,
                 help="Every KPI then shows its change against this scenario; the link carries the baseline")
    if pinned is not None:
        where.button("Clear baseline", key="clear_baseline", on_click=state.clear_baseline)
        where.caption(f"Baseline: {plain(pinned['name'])} ({pinned['accelerator']}, {pinned['ownership']}).")


def difference_table(result: Mapping[str, Any], base: Mapping[str, Any]) -> None:
    """Every ``difference`` output of the schema: baseline, current and change, each in its display format."""
    rows = []
    for name in names("difference"):
        b, c = base.get(name), result.get(name)
        change = fmt.delta(name, c, b)
        rows.append({"output": label(name), "baseline": fmt.output(name, b), "current": fmt.output(name, c),
                     "change": fmt.EMPTY if change is None else change.replace("-", fmt.MINUS, 1)})
    st.dataframe(rows, hide_index=True, width="stretch", key="baseline_table", column_config={
        "output": st.column_config.TextColumn("Output [unit]"),
        "baseline": st.column_config.TextColumn("Baseline"), "current": st.column_config.TextColumn("Current"),
        "change": st.column_config.TextColumn("Change (percentages in points)")})


def output_column(name: str, title: str | None = None) -> tuple[str, Show]:
    """A table column holding the output ``name``, in the output schema's display format, under the table's own title
    or (None) the schema's (an ``extra`` entry of :func:`show_table`: title and format have one definition each).

    >>> output_column("cost_usd_per_day", "USD per day")
    ('USD per day', <DisplayFormat.USD: 'usd'>)
    >>> output_column("output_tokens_per_s_per_user")
    ('Per-user speed [token/s]', <DisplayFormat.NUMBER: 'number'>)
    """
    return label(name) if title is None else title, OUTPUTS[name].fmt


OPTION_COLUMN: tuple[str, Show] = kpis.PLAN_COLUMNS["name"]
"""The column naming what each row of a comparison is (a plan's pool or candidate, a decode option, a KV tier's
addition), titled as the plan's pools are on the page and in the board report."""
GRID_COLUMN: tuple[str, Show] = ("Grid [gCO2e/kWh]", Show.NUMBER)
"""The grid's carbon intensity in an hour's row (the Day page's hours, the Plan page's workload hours)."""


def _kind(column: str, extra: Mapping[str, tuple[str, Show]] | None) -> tuple[str, Show] | None:
    """(header with unit, display format) of a table column from the schemas, or None for a column they lack."""
    if extra and column in extra:
        return extra[column]
    if column in OUTPUTS:
        return label(column), OUTPUTS[column].fmt
    if column in FIELDS:
        return field_label(column), Show.NUMBER if FIELDS[column].kind.numeric else Show.TEXT
    return None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))


_TEXT, _BOOL = Show.TEXT, Show.BOOL  # read per cell: economics.schema.values._FLOAT says why


def _text_cell(v: Any, kind: Show) -> str:
    if _na(v):
        return fmt.EMPTY
    if kind is _BOOL:
        return fmt.yes_no(v)
    if kind is not _TEXT and _is_number(v):
        return fmt.FORMATTERS[kind](float(v))
    return str(v)


def _magnitude(kind: Show) -> Callable[[list[float]], str]:
    return lambda numbers: fmt.magnitude_format(kind, numbers)


COLUMN_FORMATS: dict[Show, Callable[[list[float]], str] | None] = {
    **{kind: _magnitude(kind) for kind in (Show.USD, Show.USD_RATE, Show.COUNT, Show.NUMBER, Show.MONTHS)},
    Show.PERCENT: lambda _: "percent", Show.TEXT: None, Show.BOOL: None}
"""A table column's number format (``st.column_config.NumberColumn``'s ``format``) in each display format, from the
column's numbers: a printf format by their magnitude, or Streamlit's ``percent``; None for a column of words
(text cells, booleans ✓/✗)."""


def _report_columns(table: Any, extra: Mapping[str, tuple[str, Show]] | None,
                    money: bool) -> tuple[Any, dict[str, tuple[str, str | None, bool]]]:
    """:func:`report_table`'s cells, and for each column the schemas know: its header, its number format (None: a
    column of text) and whether it holds figures (numbers or money, right-aligned in a static table)."""
    out = table.copy()
    kinds: dict[str, tuple[str, str | None, bool]] = {}
    for column in out.columns:
        col = str(column)
        found = _kind(col, extra)
        if found is None:
            out[column] = [_text_cell(v, _TEXT) for v in out[column]]
            continue
        title, kind = found
        if money and kind is Show.USD:  # as the KPIs read it ($38.0 M), never 36,480,000
            out[column] = [fmt.usd(float(v)) if _is_number(v) else fmt.EMPTY for v in out[column]]
            kinds[col] = (title, None, True)
            continue
        values = list(out[column])
        numbers = [v for v in values if not _na(v)]
        form = COLUMN_FORMATS[kind]
        numeric = form is not None and all(_is_number(v) for v in numbers)
        if form is not None and numeric and len(numbers) == len(values):
            out[column] = [float(v) for v in values]
            kinds[col] = (title, form(numbers), True)
        else:
            out[column] = [_text_cell(v, kind if numeric or kind is _BOOL else _TEXT) for v in values]
            kinds[col] = (title, None, numeric)
    return out, kinds


def report_table(table: Any, extra: Mapping[str, tuple[str, Show]] | None = None,
                 money: bool = True) -> tuple[Any, dict[str, Any]]:
    """A result table read like a report, and its ``st.column_config``: headers with units from the output and
    scenario schemas, numbers by display format with precision by the column's magnitude, fractions as %,
    booleans as ✓/✗, and an empty cell as — (never "None"). A number column with empty cells is shown as
    formatted text so that no cell reads "None"; money (``usd`` columns unless ``money`` is False: a data table kept
    sortable by its numbers) as the KPIs write it ($38.0 M)."""
    out, kinds = _report_columns(table, extra, money)
    return out, _column_config(kinds)


def _column_config(kinds: Mapping[str, tuple[str, str | None, bool]]) -> dict[str, Any]:
    return {col: st.column_config.TextColumn(title) if form is None else
            st.column_config.NumberColumn(title, format=form) for col, (title, form, _) in kinds.items()}


STATIC_ROWS = 50
"""A table of at most this many rows is drawn static (``st.html``): a grid's sort and search help only a long table,
and the page's browser then lays out no grid script (the Decode page's KPIs about 100 ms sooner after an edit:
docs/speed.md). A longer table keeps the interactive grid."""


def draw_table(shown: Any, config: Mapping[str, Any] | None = None, key: str | None = None,
               column_order: Sequence[str] | None = None, figures: Collection[str] = (), wide: bool = False) -> None:
    """``st.dataframe(shown, column_config=config, ...)`` with its headers and cell text, as a static table when it
    is short (:data:`STATIC_ROWS`): each header is the column's configured label, each number the text the grid
    shows for its configured format (:func:`grid_number`), an empty cell — (where a grid writes "None"), a
    boolean ✓/✗; numbers and the ``figures`` columns right-aligned, every cell escaped (:func:`ui.text.html_table`);
    ``wide``: a table of many columns, its cells on one line and scrolling sideways as a grid's."""
    config = dict(config or {})
    if len(shown) > STATIC_ROWS:
        st.dataframe(shown, hide_index=True, width="stretch", key=key, column_config=config,
                     column_order=column_order)
        return
    st.html(static_html(shown, config, column_order, figures, wide))


def static_html(shown: Any, config: Mapping[str, Any] | None = None, column_order: Sequence[str] | None = None,
                figures: Collection[str] = (), wide: bool = False) -> str:
    """:func:`draw_table`'s static table as HTML, for a page that draws it with text around it as one element (a
    short table: :data:`STATIC_ROWS` is the caller's to check); ``wide`` as there."""
    config = dict(config or {})
    columns = [c for c in (column_order or [str(c) for c in shown.columns]) if c in shown.columns]
    titles = {c: str((config.get(c) or {}).get("label") or c) for c in columns}
    texts = grid_texts(shown[columns], config)
    rows = [dict(zip(columns, cells, strict=True)) for cells in zip(*texts.values(), strict=True)]
    right = {c for c in columns if _grid_format(config.get(c), shown[c]) not in (None, CHECKBOX)} | set(figures)
    return html_table(rows, columns, titles, right, wide)  # a set, even empty: laid out as a result table


def text_table(columns: Mapping[str, Sequence[str]], figures: Collection[str] = ()) -> None:
    """Columns of cells already written as text (header: cells), as a static result table: the ``figures`` columns
    right-aligned, every cell escaped (:func:`ui.text.html_table`). For a few rows a grid's sorting adds nothing."""
    rows = [dict(zip(columns, cells, strict=True)) for cells in zip(*columns.values(), strict=True)]
    st.html(html_table(rows, list(columns), figures=set(figures)))


def grid_texts(shown: Any, config: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """Each column's cells as text, as ``st.dataframe(shown, column_config=config)`` shows them (see
    :func:`draw_table`)."""
    config = config or {}
    out = {}
    for column in shown.columns:
        form = _grid_format(config.get(str(column)), shown[column])
        out[str(column)] = [_grid_cell(v, form) for v in shown[column]]
    return out


CHECKBOX = "checkbox"
"""A boolean column with no format: a grid draws a checkbox, a static table ✓/✗."""


def _grid_format(column: Mapping[str, Any] | None, values: Any) -> str | None:
    """A column's number format as the grid reads it: the configured one of a number column, the grid's own for a
    column of floats (``""``) or integers (``"%d"``) with none configured; :data:`CHECKBOX` for booleans; None for
    text and objects."""
    kind = ((column or {}).get("type_config") or {}).get("type")
    if kind == "number":
        return str(column["type_config"].get("format") or "")  # type: ignore[index]
    if kind is None and values.dtype == bool:
        return CHECKBOX
    if kind is not None:
        return None
    if values.dtype.kind == "f":
        return ""
    return "%d" if values.dtype.kind in "iu" else None


def _grid_cell(value: Any, form: str | None) -> str:
    if _na(value):
        return fmt.EMPTY
    if isinstance(value, bool) or form == CHECKBOX:
        return fmt.yes_no(bool(value))
    if form is None or (isinstance(value, str) and not _finite_text(value)):  # text the grid shows as it is
        return str(value)
    return grid_number(float(value), form)


def grid_number(value: float, form: str) -> str:
    """The text Streamlit's data grid (1.67, ``formatNumber``) shows for a finite number in a number format: a
    printf format (``%,.2f``: JavaScript's ``toFixed``, halves away from zero, ``,`` thousands; ``%,d``: the
    whole part), ``percent`` (en-US ``Intl``: 0 to 2 decimals, ``86.75%``), ``dollar`` (``-$4,318,837.12``), or
    ``""``, a float column with none configured (4 decimals, trailing zeros dropped, no separators). Exact: the
    binary value rounded in decimal, as the browser does."""
    exact = Decimal(value)  # the binary value in decimal, every digit
    if form == "percent":
        return _trimmed(_fixed(exact.scaleb(2), 2, ",")) + "%"
    if form == "dollar":
        text = _fixed(exact, 2, ",")
        return "-$" + text[1:] if text.startswith("-") else "$" + text
    if form == "":
        return _trimmed(_fixed(exact, 4 if value == 0 or abs(value) >= 1e-4 else -exact.adjusted()))
    found = re.fullmatch(r"%(,?)(?:\.(\d+)f|d)", form)
    if found is None:
        raise ValueError(f"number format {form!r}: not one a static table writes")
    sep, places = found.groups()
    return _fixed(Decimal(int(value)) if places is None else exact, int(places or 0), sep)


def _fixed(value: Decimal, places: int, sep: str = "") -> str:
    """``value`` to ``places`` decimals, a half away from zero (JavaScript's ``toFixed``, ``Intl``), with ``sep``
    between thousands; a negative that rounds to zero keeps its sign (``-0``), as in the grid."""
    rounded = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=Context(prec=400))
    return f"{rounded:,f}" if sep else f"{rounded:f}"


def _trimmed(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _na(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v) or str(v) in ("<NA>", "nan", "None", "NaT")
    except (TypeError, ValueError):
        return str(v) in ("<NA>", "nan", "None", "NaT")


def show_table(table: Any, key: str, extra: Mapping[str, tuple[str, Show]] | None = None,
               columns: Sequence[str] | None = None, money: bool = True, static: bool = False,
               wide: bool = False) -> None:
    """A result table read like a report (see :func:`report_table`); ``static``: drawn static when short, with the
    same headers and cell text (:func:`draw_table`, ``wide`` as there)."""
    shown, kinds = _report_columns(table if columns is None else table[[c for c in columns if c in table.columns]],
                                   extra, money)
    if static:
        draw_table(shown, _column_config(kinds), key, figures=_figures(kinds), wide=wide)
    else:
        st.dataframe(shown, hide_index=True, width="stretch", key=key, column_config=_column_config(kinds))


def _figures(kinds: Mapping[str, tuple[str, str | None, bool]]) -> set[str]:
    return {c for c, (_, _, figure) in kinds.items() if figure}


def static_report(table: Any, extra: Mapping[str, tuple[str, Show]] | None = None,
                  columns: Sequence[str] | None = None, money: bool = True) -> str:
    """``show_table(table, ..., static=True)``'s table as HTML (the same headers and cell text), for a page that
    draws it with the text around it as one element; only for a table of at most :data:`STATIC_ROWS` rows."""
    shown, kinds = _report_columns(table if columns is None else table[[c for c in columns if c in table.columns]],
                                   extra, money)
    if len(shown) > STATIC_ROWS:
        raise ValueError(f"{len(shown)} rows: a table this long is drawn as a grid (show_table)")
    return static_html(shown, _column_config(kinds), figures=_figures(kinds))


def share_link() -> str:
    """The link that reproduces the page: its address with the whole state as the query (the share panel's own
    opening left out: it is how the link is read, not part of the page it reproduces)."""
    settings = state.settings()
    settings = {**settings, "open": tuple(p for p in settings["open"] if p != SHARE)}
    query = links.link_query(state.scenario(), settings, state.baseline(), state.stored())
    return links.link_text((st.context.url or "").split("?")[0], query)


SHARE = "share"
"""The share panel's name in the page setting ``open`` (:data:`ui.links.PANELS`)."""


def share() -> None:
    """The link that reproduces the page (:func:`share_link`), shown as plain text to copy, in a panel drawn only
    while open (:func:`panel`): closed, its note and link (a code block) are neither sent nor mounted by the browser on
    a switch or a run, on every page (issue #43). The same link is the page's address (ui/state.py keeps it in step)."""
    box = panel("Share this scenario", SHARE)
    if box is not None:
        with box:
            st.caption("The link holds the whole state: every input that differs from the default scenario, the "
                       "page settings and the baseline. Opening it anywhere reproduces these results.")
            st.code(share_link(), language=None)


def _claims_for(accelerator: str | None) -> Any:
    claims = catalog.throughput_claims()
    if not accelerator:
        return claims.iloc[0:0]
    return claims[(claims["accelerator"] == accelerator) | (claims["decode_accelerator"] == accelerator)]


def measured_speed_check(field: str, accelerator_field: str) -> None:
    """A measured speed that is a catalog claim for another model or accelerator is named as such, with the claim
    for the chosen pair (if there is one) or an empty field (the estimate) one click away."""
    scenario = state.scenario()
    value = scenario.get(field)
    accelerator, model = scenario.get(accelerator_field), scenario.get("model")
    if value is None:
        return
    claims = catalog.throughput_claims()
    hit = claims[[math.isclose(float(v), float(value), rel_tol=1e-9) if _finite_text(v) else False
                  for v in claims["value"]]]
    if hit.empty:
        return
    claim = hit.iloc[0]
    on_other_model = model is not None and str(claim["model"]) not in ("", str(model))
    on_other_hardware = accelerator not in (claim["accelerator"], claim["decode_accelerator"])
    if not (on_other_model or on_other_hardware):
        return
    st.warning(f"{fmt.number(float(value))} tokens/s ({label_of(field)}) is the measured figure of "
               f"{plain(claim['system'])} running {plain(claim['model'] or 'an unstated model')}, not of "
               f"{plain(accelerator or 'no accelerator')} running {plain(model or 'no model')}.")
    own = _claims_for(accelerator)
    own = own[(own["model"] == model) & (own["metric"] == claim["metric"])] if model else own.iloc[0:0]
    if len(own):
        better = float(own.iloc[0]["value"])
        st.button(f"Use the measured {fmt.number(better)} tokens/s for this pair", key=f"use_claim_{field}",
                  on_click=state.edit_text, args=({field: repr(better)},))
    else:
        st.button("Clear it: estimate from the model", key=f"clear_claim_{field}", on_click=state.edit_text,
                  args=({field: ""},))


def throughput_provenance(result: Mapping[str, Any], lead: Sequence[str] = ()) -> None:
    """Where the page's throughput comes from (record, date, stack: :func:`economics.throughput_description`), and
    the engine's note on it: a named record that did not answer, or a given figure measured for another
    configuration (with the figure for this one a click away). ``lead``: the page's captions right above it, drawn
    as paragraphs of the same caption (one element fewer each for the browser to redraw per edit)."""
    st.caption("\n\n".join([*lead, plain(economics.throughput_description(result), max_chars=1200)]))
    note = str(result.get("throughput_note") or "")
    if note:
        st.warning(plain(note))
    if "is kept as given" in note:
        st.button("Look up the figure for this configuration", key="lookup_given_figure", on_click=state.edit_text,
                  args=({"output_tokens_per_s_per_accelerator": ""},))


def warnings_and_provenance(result: Mapping[str, Any], lead: Sequence[str]) -> None:
    """The page's ``lead`` captions and the throughput's provenance as one caption (:func:`throughput_provenance`),
    then the engine's warnings as one warning, a paragraph each: two elements, where a caption, a warning each and
    a caption were drawn (each element is mounted and redrawn by the browser on every switch and run)."""
    throughput_provenance(result, lead)
    warnings = economics.split_warnings(result["warnings"])
    if warnings:
        st.warning("\n\n".join(warnings))


def label_of(field: str) -> str:
    return f"`{field}`"


def _finite_text(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def page_start() -> None:
    """First thing on every page: the state (link read once, URL kept in step)."""
    state.begin()


def evaluation_error(error: Exception) -> None:
    """A scenario the engine refuses: its message as plain text, and where in the editor each named field is."""
    message = str(error)
    st.error(plain(message, max_chars=1000))
    fields = [f for f in dict.fromkeys(re.findall(r"\b([a-z][a-z0-9_]+):", message)) if f in FIELDS]
    if fields:
        st.info("Edit " + "; ".join(f"{field_label(f)} in the sidebar section {section(f)}" for f in fields) + ".")
