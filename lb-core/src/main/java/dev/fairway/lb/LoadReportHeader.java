package dev.fairway.lb;

import org.jspecify.annotations.Nullable;

/**
 * ORCA's per-request load report header, {@value #NAME}, read for any HTTP client: the OkHttp
 * interceptor and the Spring Cloud LoadBalancer integration both hand each response's header to
 * {@link #applyTo}, which gives the report to the call's {@link Pick} ({@link Pick#reportLoad}).
 *
 * <p>Only the {@code TEXT} form is read: {@code TEXT application_utilization=0.4,
 * named_metrics.rif=3}. The grammar, what is kept and what makes a header malformed are those of
 * Envoy's ORCA parser (see the package-private {@code LoadReportParser}); a malformed header is
 * ignored whole, and the target is then judged by what the balancer measures itself. What a report
 * claims is checked against what the balancer sees before it is used (see {@link Pick#reportLoad}).
 *
 * <p>Thread-safe and allocation-free: the header string is read in place, into one reused report
 * per thread.
 */
public final class LoadReportHeader {
  /** The response header's name. */
  public static final String NAME = "endpoint-load-metrics";

  /** One reusable report per thread: a response's header is read on the thread that handles it. */
  private static final ThreadLocal<LoadReportParser.Report> REPORTS =
      ThreadLocal.withInitial(LoadReportParser.Report::new);

  /** What {@link #applyTo} found in a header value. */
  public enum Outcome {
    /** A TEXT report; what it carried reached the pick. */
    PARSED,
    /** No header (a null value); nothing to count. */
    ABSENT,
    /** A header that is not a well-formed TEXT report: ignored, and worth counting. */
    MALFORMED
  }

  private LoadReportHeader() {}

  /**
   * Parses {@code value} (the {@value #NAME} header of the response to {@code pick}'s call, or null
   * when there was none) and, when it is a well-formed report, hands its utilization and requests
   * in flight to {@link Pick#reportLoad}. Call it before completing the pick. Never throws on any
   * header value.
   *
   * @throws IllegalArgumentException if {@code pick} is null
   */
  public static Outcome applyTo(Pick pick, @Nullable String value) {
    if (pick == null) {
      throw new IllegalArgumentException("pick: null (expected: the Pick of the call that got this response)");
    }
    if (value == null) {
      return Outcome.ABSENT;
    }
    LoadReportParser.Report report = REPORTS.get();
    Outcome outcome = LoadReportParser.parseInto(value, report);
    if (outcome == Outcome.PARSED) {
      pick.reportLoad(report.utilization(), report.requestsInFlight);
    }
    return outcome;
  }
}
