"""memu's any agent host: mines any JSONL session folder by sniffing its dialect; ``detect`` finds agents."""
