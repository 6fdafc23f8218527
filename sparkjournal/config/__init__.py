"""Every option sparkjournal takes, each defined once (option.py): the journal's
(journal_options.py), a write's and a read's (spark_options.py); the journal
configuration built from them (journal_config.py); conf/sparkjournal.conf's
text (conf_file.py). Nothing here imports pyspark.
"""
from .journal_config import CONF_ENV, JournalConfig, load_config, read_conf_file
from .journal_options import JOURNAL
from .option import Option, OptionTable
from .spark_options import READ, SINK, SPARK_OWN

__all__ = ["CONF_ENV", "JOURNAL", "READ", "SINK", "SPARK_OWN", "JournalConfig", "Option",
           "OptionTable", "load_config", "read_conf_file"]
