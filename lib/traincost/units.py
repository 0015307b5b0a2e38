"""Named unit conversions. SI inside the model; these convert at the edges.

Model code never writes a bare ``3600`` or ``1e9``: it uses these names.
"""

SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
SECONDS_PER_DAY = SECONDS_PER_HOUR * HOURS_PER_DAY
HOURS_PER_YEAR = 365.25 * HOURS_PER_DAY
SECONDS_PER_YEAR = HOURS_PER_YEAR * SECONDS_PER_HOUR
#: the mean calendar month, a twelfth of the Julian year
SECONDS_PER_MONTH = SECONDS_PER_YEAR / 12

JOULES_PER_KWH = 3.6e6
JOULES_PER_MWH = 3.6e9
WH_PER_MWH = 1e6

GIB = 2.0**30
GB = 1e9

TERA = 1e12
GIGA = 1e9
MEGA = 1e6
MILLI = 1e-3
#: bits per byte: network bandwidths are quoted in Gb/s, the model runs in B/s
BITS_PER_BYTE = 8

LITRES_PER_M3 = 1e3

GRAMS_PER_KG = 1e3
GRAMS_PER_TONNE = 1e6
KG_PER_TONNE = 1e3
LBS_PER_KG = 2.20462262185

#: bytes per element of each training precision's activations and weights
BYTES_PER_ELEMENT = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "tf32": 4.0, "fp32": 4.0}
#: DeepSeek-V3's 12-bit E5M6 format for the attention output it caches (arXiv:2412.19437
#: Sec. 3.3.2): 1 sign + 5 exponent + 6 mantissa bits
E5M6_BYTES = 12 / 8
