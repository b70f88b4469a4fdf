// units.h — the one place where byte, flop and second quantities are converted.
// Inside core every quantity is bytes / flops / seconds as a double; binary (GiB, MiB)
// and decimal (GB) conversions happen here and nowhere else.
#pragma once

namespace meshfit {

constexpr double kKiB = 1024.0;               // bytes in one KiB
constexpr double kMiB = 1024.0 * 1024.0;      // bytes in one MiB
constexpr double kGiB = 1024.0 * kMiB;        // bytes in one GiB
constexpr double kGB = 1e9;                   // bytes in one decimal GB (vendor datasheets)
constexpr double kTFLOPS = 1e12;              // flop/s in one TFLOP/s
constexpr double kSecondsPerDay = 86400.0;

constexpr double gib_to_bytes(double gib) { return gib * kGiB; }
constexpr double mib_to_bytes(double mib) { return mib * kMiB; }
constexpr double gb_to_bytes(double gb) { return gb * kGB; }
constexpr double bytes_to_gib(double bytes) { return bytes / kGiB; }
constexpr double bytes_to_mib(double bytes) { return bytes / kMiB; }
constexpr double bytes_to_gb(double bytes) { return bytes / kGB; }
constexpr double seconds_to_days(double seconds) { return seconds / kSecondsPerDay; }

}  // namespace meshfit
