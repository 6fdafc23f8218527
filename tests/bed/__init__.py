"""The multi-host test bed (cluster_bed.py) and the driver it runs (bed_driver.py)."""
