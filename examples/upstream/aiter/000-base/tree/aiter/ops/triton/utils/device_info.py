# SPDX-License-Identifier: MIT
# Copyright (C) 2024-2026, Advanced Micro Devices, Inc. All rights reserved.

import os

import torch


def get_num_sms() -> int:
    """Compute units of the current device; CU_NUM overrides for tuning runs."""
    if "CU_NUM" in os.environ:
        return int(os.environ["CU_NUM"])
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
