-- Schema version 3 (applied to a version 2 database by a writer's gt_db_open).
-- A sweep records the NVIDIA driver's own version ("580.159.04", from NVML or /proc/driver/nvidia/version): the
-- column driver_version holds the CUDA driver API version (cudaDriverGetVersion, 13000 for 13.0), which does not
-- say which driver ran the sweep. NULL for sweeps stored before, or where neither source answered.

ALTER TABLE sweeps ADD COLUMN nvidia_driver TEXT;
