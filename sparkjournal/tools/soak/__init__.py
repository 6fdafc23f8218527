"""The soak: a streaming job under fire (``sparkjournal soak``, run.py).

writer_child.py and follower_child.py are the two Spark drivers it starts, kills
and restarts; processes.py starts and kills them; verdict.py checks, at the end,
that the journal, the batch reader and the streaming reader's output each hold
every generated event exactly once.
"""
