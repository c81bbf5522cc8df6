"""What `moot eval` and `moot arena` share: many stored debates held as one resumable run (`runner.py`), a
bounded pool or the workers' queue (`pool.py`), and the results folder they land in (`folder.py`)."""
