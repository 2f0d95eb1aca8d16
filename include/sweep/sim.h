/* SPDX-License-Identifier: MIT */
/* sim: the trace-driven HDD/SSD model. (API being written; see issue 3.) */
#ifndef SWEEP_SIM_H
#define SWEEP_SIM_H
#include <sweep/common.h>
#endif
