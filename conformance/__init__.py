"""The conformance suite: drive any timer or purgatory through an adapter, record a history,
judge it against :mod:`wheelspec.spec`."""
