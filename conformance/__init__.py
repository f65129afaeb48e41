"""The conformance suite: drive any timer or purgatory through an adapter, record a history,
judge it against :mod:`wheelspec.spec`, and report.

Data flows through these stages, one package each:

===================== ===============================================================================
package               what it owns
===================== ===============================================================================
:mod:`.adapters`      reaching an implementation: the Adapter interface, the wire protocol, the
                      subprocess client and server, our engines and third-party timers as adapters
:mod:`.check`         the virtual-time conformance run: the scenario corpus, seeded random campaigns,
                      running operations, judging a run, shrinking a failure, reports (JSON, JUnit)
:mod:`.traces`        histories as Parquet traces: format, synthetic traces, set-based analysis
                      (pyarrow locally, Spark on a cluster), the HTML report, campaigns on Spark
:mod:`.realtime`      timers without a virtual clock, judged against the wall clock
:mod:`.matrix`        the conformance matrix of third-party timers and our engines
:mod:`.concurrency`   real threads against thread-safe facades, and linearizability checking
:mod:`.cli`           the ``wheelspec`` command: argument parsing and printing only
:mod:`.measure`       the runner's own measurements (its power against broken timers, its speed)
===================== ===============================================================================

:mod:`.api` is the library API (:func:`check_impl`, for one's own tests) and :mod:`.pytest_plugin`
runs the suite inside a user's own pytest run (``docs/guides/PYTEST.md``); both, and ``wheelspec
check``, check an implementation through :mod:`.check.session`.  :mod:`.interrupt` turns SIGINT and
SIGTERM into one exception and writes reports atomically, for the commands and the run alike.  The
semantics themselves (properties, profiles, the history checker) are in :mod:`wheelspec.spec`;
nothing here restates them.
"""

from wheelspec.conformance.api import CheckResult, check_impl  # the library API, light at import

__all__ = ["CheckResult", "check_impl"]
