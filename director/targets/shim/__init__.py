"""The parts of the `wrangler` shim for `--target local` (entry point: `director.targets.wrangler_shim`)."""
