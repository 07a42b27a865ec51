package dev.fairway.lb;

import dev.fairway.lb.LoadReportHeader.Outcome;
import java.util.concurrent.atomic.LongAdder;

/**
 * Reads the per-request load report a backend sends in ORCA's {@value LoadReportHeader#NAME} response header, in
 * its TEXT form, e.g. {@code endpoint-load-metrics: TEXT cpu_utilization=0.3, named_metrics.rif=5}.
 *
 * <h2>Grammar</h2>
 *
 * As Envoy reads it ({@code source/common/orca/orca_parser.cc} and its tests): the value starts with
 * the format prefix {@code TEXT}, then a comma-separated list of {@code key=value} pairs (Envoy also
 * accepts {@code key:value}, the separator of its first version, and so does this parser). Keys are
 * the fields of xds' {@code OrcaLoadReport}: {@code cpu_utilization}, {@code mem_utilization},
 * {@code application_utilization}, {@code rps_fractional}, {@code eps}, and {@code named_metrics.NAME}
 * (also {@code utilization.NAME}); values are decimal numbers. Whitespace (spaces, tabs) is allowed
 * around the prefix, keys, separators and values, and empty list elements are skipped, as RFC 9110's
 * list syntax asks of a recipient.
 *
 * <h2>What is kept</h2>
 *
 * The five standard fields and two named metrics, {@code named_metrics.rif} (requests in flight, the
 * name Prequal uses and grpc-go's ORCA example sends) and {@code named_metrics.workers} (the capacity
 * those requests share), go into a caller-supplied {@link Report}. Other keys are skipped unread (Envoy
 * rejects unknown keys; a client that ignores them keeps working when a server adds a metric).
 *
 * <h2>Malformed reports</h2>
 *
 * A header is malformed, and nothing of it is kept, when it does not start with {@code TEXT} (an
 * empty value, no prefix, the {@code JSON} and {@code BIN} forms, which this parser does not read),
 * when a pair has no key, no separator or no value, when a kept key appears twice, or when a kept
 * key's value is not a finite non-negative decimal number ({@code NaN}, {@code Infinity}, {@code -1},
 * {@code "0.7"}, {@code 0x10}, {@code 1e400}). Envoy rejects these the same way. {@link #parse} then
 * returns {@link Outcome#MALFORMED}, leaves the report empty and counts it ({@link #malformed()});
 * it never throws.
 *
 * <h2>Cost</h2>
 *
 * Parsing works on the header string in place with index arithmetic: no substring, no boxing, no
 * allocation (the counter's {@link LongAdder} may allocate a cell under contention, only for
 * malformed headers). Decimal values with at most 15 significant digits and an exponent within
 * ±22, which is every value a load report sends in practice, are converted exactly (correctly
 * rounded) in place; longer ones are handed to {@link Double#parseDouble} (correctly rounded too, at
 * the cost of one substring).
 *
 * <p>Thread-safe: one parser serves every call; each thread brings its own {@link Report}.
 */
final class LoadReportParser {
  private static final String PREFIX = "TEXT";

  // Indexes of the kept keys: a bit each in the duplicate mask, a slot each in Report.
  static final int CPU_UTILIZATION = 0;
  static final int MEM_UTILIZATION = 1;
  static final int APPLICATION_UTILIZATION = 2;
  static final int RPS_FRACTIONAL = 3;
  static final int EPS = 4;
  static final int REQUESTS_IN_FLIGHT = 5;
  static final int WORKERS = 6;
  private static final String[] KEYS = {
    "cpu_utilization",
    "mem_utilization",
    "application_utilization",
    "rps_fractional",
    "eps",
    "named_metrics.rif",
    "named_metrics.workers",
  };

  /** Exact powers of ten: every one of them is a double without rounding. */
  private static final double[] POWERS_OF_TEN = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22
  };
  /** Mantissas up to 2^53 are exact doubles. */
  private static final long EXACT_MANTISSA = 1L << 53;
  /** Digits beyond these cannot change a double; they only move the decimal point. */
  private static final int MAX_DIGITS = 18;

  private final LongAdder malformed = new LongAdder();

  /**
   * Parses {@code headerValue} (the value of {@value LoadReportHeader#NAME}, or null when the response had none)
   * into {@code into}, which is cleared first. Never throws.
   */
  Outcome parse(String headerValue, Report into) {
    Outcome outcome = parseInto(headerValue, into);
    if (outcome == Outcome.MALFORMED) {
      malformed.increment();
    }
    return outcome;
  }

  /** Malformed headers seen since this parser was made. */
  long malformed() {
    return malformed.sum();
  }

  static Outcome parseInto(String v, Report into) {
    into.clear();
    if (v == null) {
      return Outcome.ABSENT;
    }
    int n = v.length();
    int i = skipWhitespace(v, 0, n);
    if (!v.startsWith(PREFIX, i)) {
      return malformed(into);
    }
    i += PREFIX.length();
    if (i < n && !isWhitespace(v.charAt(i))) {
      return malformed(into); // "TEXTcpu_utilization=..." or another prefix such as "TEXTUAL"
    }
    int seen = 0;
    while (true) {
      i = skipWhitespace(v, i, n);
      if (i == n) {
        return Outcome.PARSED;
      }
      if (v.charAt(i) == ',') {
        i++; // an empty list element
        continue;
      }
      int keyStart = i;
      while (i < n && isKeyChar(v.charAt(i))) {
        i++;
      }
      int keyEnd = i;
      i = skipWhitespace(v, i, n);
      if (keyEnd == keyStart || i == n || (v.charAt(i) != '=' && v.charAt(i) != ':')) {
        return malformed(into);
      }
      int valueStart = skipWhitespace(v, i + 1, n);
      i = valueStart;
      while (i < n && v.charAt(i) != ',') {
        i++;
      }
      int valueEnd = trimWhitespaceEnd(v, valueStart, i);
      if (valueEnd == valueStart) {
        return malformed(into);
      }
      int key = keyIndex(v, keyStart, keyEnd);
      if (key < 0) {
        continue; // not kept: skipped unread
      }
      if ((seen & (1 << key)) != 0) {
        return malformed(into);
      }
      seen |= 1 << key;
      double value = parseDecimal(v, valueStart, valueEnd);
      // NaN fails the comparison too.
      if (!(value >= 0) || value == Double.POSITIVE_INFINITY) {
        return malformed(into);
      }
      into.set(key, value + 0.0); // -0 becomes 0
    }
  }

  private static Outcome malformed(Report into) {
    into.clear();
    return Outcome.MALFORMED;
  }

  private static int keyIndex(String v, int start, int end) {
    int length = end - start;
    for (int k = 0; k < KEYS.length; k++) {
      if (KEYS[k].length() == length && v.regionMatches(start, KEYS[k], 0, length)) {
        return k;
      }
    }
    return -1;
  }

  /**
   * The decimal number in {@code v[start, end)}: optional sign, digits with an optional fraction
   * (at least one digit in all), optional exponent. NaN if it is anything else.
   */
  static double parseDecimal(String v, int start, int end) {
    int i = start;
    boolean negative = false;
    char c = v.charAt(i);
    if (c == '+' || c == '-') {
      negative = c == '-';
      i++;
    }
    long mantissa = 0;
    int significant = 0;
    int exponent = 0;
    boolean anyDigit = false;
    for (; i < end && isDigit(v.charAt(i)); i++) {
      anyDigit = true;
      if (significant < MAX_DIGITS) {
        mantissa = mantissa * 10 + (v.charAt(i) - '0');
        if (mantissa != 0) {
          significant++;
        }
      } else {
        exponent++;
      }
    }
    if (i < end && v.charAt(i) == '.') {
      for (i++; i < end && isDigit(v.charAt(i)); i++) {
        anyDigit = true;
        if (significant < MAX_DIGITS) {
          mantissa = mantissa * 10 + (v.charAt(i) - '0');
          if (mantissa != 0) {
            significant++;
          }
          exponent--;
        }
      }
    }
    if (!anyDigit) {
      return Double.NaN;
    }
    if (i < end && (v.charAt(i) == 'e' || v.charAt(i) == 'E')) {
      i++;
      boolean negativeExponent = false;
      if (i < end && (v.charAt(i) == '+' || v.charAt(i) == '-')) {
        negativeExponent = v.charAt(i) == '-';
        i++;
      }
      int written = 0;
      boolean anyExponentDigit = false;
      for (; i < end && isDigit(v.charAt(i)); i++) {
        anyExponentDigit = true;
        if (written < 100_000) { // far past any double; keeps the int from overflowing
          written = written * 10 + (v.charAt(i) - '0');
        }
      }
      if (!anyExponentDigit) {
        return Double.NaN;
      }
      exponent += negativeExponent ? -written : written;
    }
    if (i != end) {
      return Double.NaN;
    }
    double magnitude;
    if (mantissa == 0) {
      magnitude = 0;
    } else if (mantissa < EXACT_MANTISSA && Math.abs(exponent) < POWERS_OF_TEN.length) {
      // Both operands exact, so the one rounding of * or / gives the correctly rounded result.
      magnitude = exponent >= 0 ? mantissa * POWERS_OF_TEN[exponent] : mantissa / POWERS_OF_TEN[-exponent];
    } else {
      // Rare (16 or more significant digits, or an exponent beyond 10^22): scaling by a power of ten
      // would round twice and can flush a normal number to 0 or push one just below Double.MAX_VALUE
      // to infinity (both found by LoadReportParserFuzzTest.decimal). The JDK's reader is correctly
      // rounded; the grammar above has already checked that the text is a plain decimal.
      magnitude = Double.parseDouble(v.substring(negative || v.charAt(start) == '+' ? start + 1 : start, end));
    }
    return negative ? -magnitude : magnitude;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isWhitespace(char c) {
    return c == ' ' || c == '\t';
  }

  /** Anything visible but the separators. */
  private static boolean isKeyChar(char c) {
    return c > ' ' && c != '=' && c != ':' && c != ',' && c != 0x7f;
  }

  private static int skipWhitespace(String v, int i, int end) {
    while (i < end && isWhitespace(v.charAt(i))) {
      i++;
    }
    return i;
  }

  private static int trimWhitespaceEnd(String v, int start, int end) {
    while (end > start && isWhitespace(v.charAt(end - 1))) {
      end--;
    }
    return end;
  }

  /**
   * One parsed report: the kept fields as primitives, NaN where the report did not carry them.
   * Mutable and reused; not thread-safe (one per thread or per call).
   */
  static final class Report {
    double cpuUtilization;
    double memUtilization;
    double applicationUtilization;
    double rpsFractional;
    double eps;
    /** {@code named_metrics.rif}: requests in flight at the backend. */
    double requestsInFlight;
    /** {@code named_metrics.workers}: how many requests the backend serves at once. */
    double workers;

    Report() {
      clear();
    }

    void clear() {
      cpuUtilization = Double.NaN;
      memUtilization = Double.NaN;
      applicationUtilization = Double.NaN;
      rpsFractional = Double.NaN;
      eps = Double.NaN;
      requestsInFlight = Double.NaN;
      workers = Double.NaN;
    }

    /**
     * The backend's utilization as gRPC's weighted round robin reads it (gRFC A58):
     * {@code application_utilization} when it is set and positive, else {@code cpu_utilization};
     * a zero {@code application_utilization} alone is 0 (an idle server); NaN when neither is set.
     */
    double utilization() {
      return applicationUtilization > 0 || Double.isNaN(cpuUtilization) ? applicationUtilization : cpuUtilization;
    }

    void set(int key, double value) {
      switch (key) {
        case CPU_UTILIZATION -> cpuUtilization = value;
        case MEM_UTILIZATION -> memUtilization = value;
        case APPLICATION_UTILIZATION -> applicationUtilization = value;
        case RPS_FRACTIONAL -> rpsFractional = value;
        case EPS -> eps = value;
        case REQUESTS_IN_FLIGHT -> requestsInFlight = value;
        case WORKERS -> workers = value;
        default -> throw new AssertionError(key);
      }
    }
  }
}
