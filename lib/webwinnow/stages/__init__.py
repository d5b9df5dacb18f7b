"""Pipeline stages: each reads its inputs, writes its own table folder(s), and can run alone."""
