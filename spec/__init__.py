"""The formal model: what a Kafka-style timing wheel and purgatory must do.

This package *defines*; it implements nothing that runs tasks, and it imports nothing else of
wheelspec.  Every semantic fact has its one home here:

=========================== =========================================================================
module                      what it owns
=========================== =========================================================================
``SEMANTICS.md``            the semantics written down, rule by rule
:mod:`.limits`              the accepted ranges (delays, clock readings, ids, the expiration span)
:mod:`.ops`                 the operations, as data (what a driver asks)
:mod:`.events`              the observable events, as data (what a history records); which are caused
:mod:`.results`             which event records the result of which operation
:mod:`.history`             a history: the ordered events of one run, with its JSON-lines form
:mod:`.api`                 the per-operation API every engine offers, as a typed Protocol
:mod:`.simulation`          the driver of that API the engines share: constructor and argument checks,
                            id registries, event recording (the engines supply the engine)
:mod:`.profiles`            the named firing rules and how each behaves (kafka, strict, strict-gt)
:mod:`.properties`          every property any judge reports, with its source, every form that judges
                            it and every engine that implements it; the matrix columns
:mod:`.sequential_spec`     the sequential specification of one task's and one operation's calls
                            (the step function the linearizability checker searches with)
:mod:`.findings`            one finding type: a property broken, where, and why
:mod:`.show`                how operations, events, responses and findings read for people
:mod:`.errors`              the exception hierarchy (``wheelspec.Error`` is its root)
:mod:`.checker`             the history checker (fast path), with :mod:`.checker_z3` and
                            :mod:`.checker_z3_results` confirming and minimising with Z3 over
                            the symbolic events of :mod:`.z3_window`
:mod:`.lemmas`, :mod:`.bmc` Z3 proofs of the wheel's arithmetic and bounded model checking
                            (``PROOFS.md``)
``root/``                   the root package ``wheelspec`` (version, ``wheelspec.Error``)
=========================== =========================================================================
"""
