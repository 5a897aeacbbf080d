"""The store (economics.store) on SQLite and on a real PostgreSQL: migrations from empty, versions and what changed,
optimistic concurrency, every value read back checked by the scenario schema, curves that outlive the process,
studies, export and import, limits, and the CLI's store commands and --scenario."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

import economics
from economics import cli, store
from economics.schema import user_curves
from economics.store import database, records
from economics.store.models import Base
from tests import store_fixtures
from tests.store_fixtures import curve_bytes, forget_curves


@pytest.fixture(params=store_fixtures.ENGINES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty store on SQLite, then on PostgreSQL; the curves in memory forgotten after."""
    yield store_fixtures.url_for(request, tmp_path)
    forget_curves()


RENTED = {"accelerator": "h100-sxm", "ownership": "rent", "accelerator_count": 8, "rent_usd_per_accelerator_hour": 2,
          "output_tokens_per_s_per_accelerator": 1000}


def test_migrations_run_up_from_an_empty_database_to_the_models(store_url: str) -> None:
    engine = database.create_engine(store_url)
    assert database.current_revision(engine) is None  # empty
    s = store.Store(store_url)
    assert database.current_revision(s.engine) == database.head_revision() == "0001"
    with s.engine.connect() as connection:  # the migrated tables are the models' tables, column for column
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert [d for d in differences if d[0] not in ("add_constraint", "remove_constraint", "add_index",
                                                   "remove_index")] == []
    assert database.migrate(s.engine) == "0001"  # again: nothing to do


def test_versions_record_who_what_changed_and_the_kpis_compare(store_url: str) -> None:
    s = store.Store(store_url)
    v1 = s.save_scenario("budget q3", {**RENTED, "accelerator_count": "8"}, saved_by="ana", project="fy26")
    v2 = s.save_scenario("budget q3", {**RENTED, "accelerator_count": 16}, base_version=1, note="double it",
                         saved_by="li")
    assert (v1.version, v2.version, v2.saved_by, v2.note) == (1, 2, "li", "double it")
    assert v1.fields is not None and v1.fields["accelerator_count"] == 8  # "8" from a CSV cell read as the schema does
    assert v2.changes == [{"field": "accelerator_count", "before": 8, "after": 16}]
    assert [v.version for v in s.history("budget q3")] == [2, 1]
    assert s.scenario("budget q3").version == 2 and s.scenario("budget q3", 1).fields == v1.fields
    listed = s.list_scenarios(search="Q3")
    assert [(x.name, x.project, x.latest_version, x.saved_by) for x in listed] == [("budget q3", "fy26", 2, "li")]
    assert s.list_scenarios(search="other") == [] and s.count_scenarios(project="fy26") == 1
    both = store.compare(s.scenario("budget q3", 1), s.scenario("budget q3", 2))
    hourly = next(k for k in both.kpis if k["output"] == "cost_usd_per_hour")
    # 8 rented H100 at 2 USD/h = 16 USD/h; 16 of them = 32 USD/h: +16 USD/h, +100 %
    assert (hourly["a"], hourly["b"], hourly["difference"], hourly["relative_change"]) == (16.0, 32.0, 16.0, 1.0)
    assert both.fields == v2.changes


def test_the_list_is_paged_in_the_database_by_name_with_its_count(store_url: str) -> None:
    # 120 scenarios s000..s119, saved in reverse order; the third version of s007 (its newest is listed once)
    s = store.Store(store_url)
    s.save_versions([(f"s{i:03d}", RENTED) for i in reversed(range(120))] + [("s007", RENTED)] * 2, saved_by="ana")
    page = s.list_scenarios(limit=50, offset=50)  # the second page of 50: s050..s099, by name
    assert [x.name for x in page] == [f"s{i:03d}" for i in range(50, 100)]
    assert [x.name for x in s.list_scenarios(limit=50, offset=100)] == [f"s{i:03d}" for i in range(100, 120)]
    assert s.list_scenarios(limit=50, offset=150) == [] and s.count_scenarios() == 120
    # "s01" is in s010..s019 (10 names); their second page of 4: s014..s017
    assert s.count_scenarios("S01") == 10
    assert [x.name for x in s.list_scenarios("S01", limit=4, offset=4)] == ["s014", "s015", "s016", "s017"]
    assert [(x.name, x.latest_version) for x in s.list_scenarios("s007")] == [("s007", 3)]


def test_a_stale_save_is_refused_naming_the_newer_version_and_nothing_is_lost(store_url: str) -> None:
    first, second = store.Store(store_url), store.Store(store_url)  # two users, two connections
    first.save_scenario("team", RENTED, saved_by="ana")
    first.save_scenario("team", {**RENTED, "accelerator_count": 16}, base_version=1, saved_by="ana")
    with pytest.raises(store.StaleVersion, match=r"based on version 1, but version 2 \(saved by ana") as refused:
        second.save_scenario("team", {**RENTED, "accelerator_count": 4}, base_version=1, saved_by="li")
    assert refused.value.newer == 2
    with pytest.raises(store.StaleVersion, match="in the store already, its newest is version 2"):
        second.save_scenario("team", RENTED, saved_by="li")  # a "new" scenario whose name is taken
    assert [v.saved_by for v in first.history("team")] == ["ana", "ana"]


def test_two_concurrent_saves_of_one_scenario_one_is_refused(store_url: str) -> None:
    s = store.Store(store_url)
    s.save_scenario("race", RENTED, saved_by="ana")
    barrier, outcomes = threading.Barrier(2), {}

    def save(who: str, count: int) -> None:
        barrier.wait()
        try:
            outcomes[who] = store.Store(store_url).save_scenario("race", {**RENTED, "accelerator_count": count},
                                                                 base_version=1, saved_by=who).version
        except store.StaleVersion as exc:
            outcomes[who] = exc

    threads = [threading.Thread(target=save, args=(w, c)) for w, c in (("ana", 16), ("li", 32))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    saved = [w for w, o in outcomes.items() if o == 2]
    refused = [o for o in outcomes.values() if isinstance(o, store.StaleVersion)]
    assert len(saved) == 1 and len(refused) == 1 and refused[0].newer == 2
    history = s.history("race")
    assert [v.version for v in history] == [2, 1] and history[0].saved_by == saved[0]  # the winner's, whole


@pytest.mark.parametrize(("edited", "field"), [('{"pue": 0.5}', "pue"), ('{"accelerator": "h100-sxm", "flux": 1}',
                                                                        "flux"),
                                               ('{"pue": NaN}', "fields"), ('[1, 2]', "fields")])
def test_a_row_edited_by_hand_is_refused_naming_the_field(store_url: str, edited: str, field: str) -> None:
    s = store.Store(store_url)
    s.save_scenario("edited", RENTED, saved_by="ana")
    with s.engine.begin() as connection:
        connection.execute(sa.text("UPDATE scenario_versions SET fields = :f"), {"f": edited})
    with pytest.raises(store.InvalidStored, match=f"scenario 'edited' version 1: {field}") as refused:
        s.scenario("edited")
    assert refused.value.field in (field, None) or field == "fields"


def test_bad_input_is_refused_naming_the_field_and_limits_hold(store_url: str) -> None:
    s = store.Store(store_url)
    with pytest.raises(store.InvalidStored, match=r"pue: must be >= 1"):
        s.save_scenario("bad", {**RENTED, "pue": 0.5}, saved_by="ana")
    with pytest.raises(store.TooLarge, match="note: 2,001 characters, more than the 2,000"):
        s.save_scenario("ok", RENTED, note="x" * 2001, saved_by="ana")
    with pytest.raises(store.TooLarge, match="name: 201 characters"):
        s.save_scenario("n" * 201, RENTED, saved_by="ana")
    with pytest.raises(store.StoreError, match="control characters"):
        s.save_scenario("a\x1b[31mred", RENTED, saved_by="ana")
    with pytest.raises(store.StoreError, match="results: .*not finite JSON"):
        s.save_study("nan", "plan", {}, {"cost": float("nan")}, saved_by="ana")
    assert s.count_scenarios() == 0 and s.list_studies() == []  # nothing half-saved


def test_a_stored_curve_resolves_after_a_restart(store_url: str) -> None:
    s = store.Store(store_url)
    curve = s.save_curve(curve_bytes(), "mine.csv", saved_by="eng")
    assert curve.provenance["tool"] == ["sglang"] and curve.points > 0
    assert s.save_curve(curve_bytes(), "renamed.csv", saved_by="x").name == "mine.csv"  # never replaced
    link = {"accelerator": "h200-sxm", "model": "deepseek-v3", "precision": "fp8", "accelerator_count": 8,
            "input_tokens_per_request": 1024, "output_tokens_per_request": 1024,
            "target_output_tokens_per_s_per_user": 1000 / 16.4839, "curves_sha256": curve.sha256}
    before = economics.evaluate_scenario(link)
    s.save_scenario("measured", link, saved_by="eng")
    forget_curves()  # the process restarts: nothing in memory
    s.engine.dispose()
    again = store.Store(store_url).scenario("measured")
    assert user_curves.loaded_here(curve.sha256) is not None  # read from the store with the scenario
    assert economics.evaluate_scenario(again.scenario())["cost_usd_per_m_tokens"] == before["cost_usd_per_m_tokens"]
    with s.engine.begin() as connection:  # bytes edited by hand no longer hash to their name
        connection.execute(sa.text("UPDATE curves SET data = :d"), {"d": curve_bytes() + b"\n"})
    forget_curves()
    with pytest.raises(store.InvalidStored, match="no longer hash to its SHA-256"):
        s.curve_file(curve.sha256)


def test_studies_keep_inputs_and_results_and_are_never_replaced(store_url: str) -> None:
    s = store.Store(store_url)
    s.save_scenario("base", RENTED, saved_by="ana")
    plan = {"feasible": True, "cost_usd_per_hour": 16.0, "pools": [{"accelerator": "h100-sxm", "count": 8}]}
    saved = s.save_study("q3 plan", "plan", {"scenario": RENTED, "options": {"frontier": "none"}}, plan,
                         scenario="base@1", saved_by="ana")
    assert (saved.kind, saved.scenario_name, saved.scenario_version, saved.results) == (
        store.StudyKind.PLAN, "base", 1, plan)
    with pytest.raises(store.Conflict, match="study 'q3 plan': a study of that name is in the store already"):
        s.save_study("q3 plan", "plan", {}, {}, saved_by="li")
    with pytest.raises(store.StoreError, match="kind: guess is not one of plan"):
        s.save_study("x", "guess", {}, {}, saved_by="li")
    assert [x.name for x in s.list_studies(kind="plan")] == ["q3 plan"]
    s.delete_study("q3 plan")
    assert s.list_studies() == []


def test_export_and_import_move_everything_and_replace_nothing(store_url: str, tmp_path: Path) -> None:
    s = store.Store(store_url)
    curve = s.save_curve(curve_bytes(), "mine.csv", saved_by="eng")
    s.save_scenario("a", RENTED, saved_by="ana")
    s.save_scenario("a", {**RENTED, "accelerator_count": 16}, base_version=1, saved_by="li")
    s.save_study("p", "plan", {}, {"x": 1}, saved_by="ana")
    doc = json.loads(json.dumps(store.export_document(s)))
    other = store.Store(f"sqlite:///{tmp_path / 'other.sqlite'}")
    counts = store.import_document(other, doc)
    assert counts == {"versions": 2, "versions_skipped": 0, "curves": 1, "studies": 1, "studies_skipped": 0}
    assert [(v.version, v.saved_by) for v in other.history("a")] == [(2, "li"), (1, "ana")]
    assert other.curve(curve.sha256).name == "mine.csv"
    assert store.import_document(other, doc)["versions_skipped"] == 2  # again: nothing added, nothing replaced
    doc["scenarios"][0]["versions"][1]["fields"]["accelerator_count"] = 4
    with pytest.raises(store.Conflict, match="scenario 'a' version 2: the store has another version 2"):
        store.import_document(other, doc)


def test_the_default_store_is_a_file_in_the_data_directory() -> None:
    assert database.database_url({"XDG_DATA_HOME": "data-home"}) == "sqlite:///data-home/token-economics/store.sqlite"
    assert database.database_url({database.URL_VARIABLE: "postgresql+psycopg://u@h/db"}).startswith("postgresql")
    assert records.reference("name@with@2") == ("name@with", 2)


def test_reading_never_creates_a_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none' / 'store.sqlite'}"
    assert store.existing_store(url) is None and not (tmp_path / "none").exists()
    with pytest.raises(store.NotFound, match="there is no store yet"):
        store.resolve("budget@1", url)


# --- the CLI --------------------------------------------------------------------------------------------------------

def test_cli_saves_lists_shows_and_evaluates_a_stored_version(store_url: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(database.URL_VARIABLE, store_url)
    table = tmp_path / "s.csv"
    table.write_text("name,accelerator,ownership,accelerator_count,rent_usd_per_accelerator_hour,"
                     "output_tokens_per_s_per_accelerator\nfleet,h100-sxm,rent,8,2,1000\n")
    assert cli.main(["store", "save", str(table), "--row", "fleet", "--by", "ana"]) == 0
    assert cli.main(["store", "save", str(table), "--row", "fleet", "--by", "li"]) == 2  # no base version: refused
    assert "its newest is version 1 (saved by ana" in capsys.readouterr().err
    table.write_text(table.read_text().replace(",8,2,", ",16,2,"))
    assert cli.main(["store", "save", str(table), "--row", "fleet", "--by", "li", "--base-version", "1"]) == 0
    capsys.readouterr()
    assert cli.main(["store", "list"]) == 0
    assert json.loads(capsys.readouterr().out)["scenarios"][0]["latest_version"] == 2
    assert cli.main(["evaluate", "--scenario", "fleet@1", "--format", "json"]) == 0
    out = capsys.readouterr()
    row = json.loads(out.out)[0]
    # version 1: 8 H100 rented at 2 USD/h each = 16 USD/h
    assert (row["name"], row["cost_usd_per_hour"]) == ("fleet@1", 16)
    assert "fleet@1: saved by ana" in out.err
    assert cli.main(["explain", "--scenario", "fleet"]) == 0
    assert "name = fleet@2" in capsys.readouterr().out
    assert cli.main(["explain", "--scenario", "fleet@9"]) == 2
    assert "scenario 'fleet': no version 9 (versions 1 to 2)" in capsys.readouterr().err
    assert cli.main(["explain", str(table)]) == 2
    assert "--row: required with an input file" in capsys.readouterr().err
    assert cli.main(["store", "delete", "fleet"]) == 2 and cli.main(["store", "delete", "fleet", "--yes"]) == 0
