"""memu telemetry: an opt-in, local-first EventSink (spool, flush, `memu events`)."""
