"""While a command runs, library output stays off the terminal: Python warnings are not shown, Dask's loggers say
nothing below CRITICAL, and the solver's C++ chatter on descriptor 1 goes to the null device; all restored after."""

from __future__ import annotations

import logging
import os
import warnings

import numpy as np
import pytest

from economics.io.interrupts import libraries_quiet
from economics.io.plan_files import solver_chatter_silenced


def test_warnings_and_dask_logs_stay_quiet_while_a_command_runs(capsys: pytest.CaptureFixture[str],
                                                                caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("distributed.worker")
    with libraries_quiet(), warnings.catch_warnings(record=True) as seen:
        np.log(np.zeros(1))  # numpy: RuntimeWarning divide by zero
        warnings.warn("pandas would say this", FutureWarning, stacklevel=1)
        log.error("Compute Failed: Traceback (most recent call last) ...")
    assert seen == [] and "Compute Failed" not in caplog.text
    assert capsys.readouterr().err == ""
    with pytest.warns(RuntimeWarning):  # restored after
        np.log(np.zeros(1))
    log.error("after")
    assert "after" in caplog.text


def test_solver_chatter_on_descriptor_1_reaches_no_stream(capfd: pytest.CaptureFixture[str]) -> None:
    with solver_chatter_silenced():
        os.write(1, b"Running HiGHS 1.7.0: Copyright (c) 2024\n")
    os.write(1, b"the plan\n")
    out, err = capfd.readouterr()
    assert (out, err) == ("the plan\n", "")
