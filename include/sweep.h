/* SPDX-License-Identifier: MIT */
/* libsweep: read and copy large file trees in physical disk order. See sweep(7). */
#ifndef SWEEP_H
#define SWEEP_H

#include <sweep/version.h>
#include <sweep/common.h>
#include <sweep/fsinfo.h>
#include <sweep/extent.h>
#include <sweep/walk.h>
#include <sweep/plan.h>
#include <sweep/reader.h>
#include <sweep/batch.h>
#include <sweep/trace.h>
#include <sweep/copy.h>
#include <sweep/order.h>

#endif
