"""The formal model: what a Kafka-style timing wheel and purgatory must do.

This package *defines*; it implements nothing that runs tasks. It holds:

* :mod:`.limits`   -- the ranges of parameters, delays and clock readings wheelspec accepts;
* :mod:`.ops`      -- the operations of the semantics, as data (what a driver asks);
* :mod:`.events`   -- the observable events, as data (what a history records);
* :mod:`.profiles` -- the named firing rules (kafka tick-window, strict >=, strict >);
* ``SEMANTICS.md`` -- the semantics written down.
"""
