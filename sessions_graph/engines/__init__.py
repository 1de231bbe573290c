"""Storage engines: one interface (``base.Engine``), one module per database."""
