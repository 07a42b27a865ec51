package dev.fairway.lb.internal;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The one rule by which an HTTP integration turns a response into its pick's outcome, for every
 * client Fairway plugs into (the OkHttp interceptor, the Spring Cloud LoadBalancer lifecycle, and
 * the adapters to come); it needs no HTTP library, only the status code and the value of the {@value
 * LoadReportHeader#NAME} header.
 *
 * <ol>
 *   <li>The response's load report goes to the pick first, whatever the status: a target that
 *       answers 503 because it is overloaded says so most usefully then ({@link
 *       LoadReportHeader#applyTo}). What was read is counted in {@link LoadReportMeters} ({@code
 *       parsed} or {@code malformed}; a missing header counts nothing).
 *   <li>Then the status decides: one of the configured failure codes ({@link
 *       #DEFAULT_FAILURE_STATUS_CODES} unless configured) makes the call a failure of the target,
 *       reported with a {@link FailureStatusException}; any other status is a success.
 * </ol>
 *
 * The caller completes the pick itself, since only it knows when (OkHttp completes when the body is
 * closed, so that streaming counts as load) and what else ends a call (a cancel, an exception):
 * {@link #read} says which completion the response asks for: a success, or a failure whose cause is
 * {@code new FailureStatusException(status, target.id())}.
 *
 * <p>The status and report come as a code and a header value rather than a response object or a
 * header lookup so that reading a response allocates nothing (a lookup would be a capturing lambda
 * per call) and the rule compiles against no client. Immutable and thread-safe. Not public API (see
 * the package documentation).
 */
public final class OutcomeRule {
  /** Returned by {@link #read} for a response that is a success of the target. */
  public static final int SUCCESS = 0;

  private static final int[] DEFAULT_FAILURE_STATUS_CODES = {500, 502, 503, 504};

  private final boolean[] failureStatus = new boolean[600];
  private final int[] failureStatusCodes;
  private final LoadReportMeters meters;

  /**
   * @param failureStatusCodes the statuses that are failures of the target, each 100..599 (the
   *     integration's builder or properties checked them already, with their own field names)
   * @param meters where the reports read are counted ({@link LoadReportMeters#NOOP} for nowhere)
   * @throws IllegalArgumentException naming a code outside 100..599
   */
  public OutcomeRule(int[] failureStatusCodes, LoadReportMeters meters) {
    for (int code : failureStatusCodes) {
      Args.requireArgument(code >= 100 && code <= 599, "failureStatusCodes", code, "100..599");
      failureStatus[code] = true;
    }
    this.failureStatusCodes = failureStatusCodes.clone();
    this.meters = meters;
  }

  /** 500, 502, 503 and 504: the statuses of a server that failed or could not answer; a new array. */
  public static int[] defaultFailureStatusCodes() {
    return DEFAULT_FAILURE_STATUS_CODES.clone();
  }

  /** The configured failure codes, in the order given; a new array. */
  public int[] failureStatusCodes() {
    return failureStatusCodes.clone();
  }

  /** True if {@code status} is one of the failure codes. Any int is accepted. */
  public boolean isFailureStatus(int status) {
    return status >= 0 && status < failureStatus.length && failureStatus[status];
  }

  /**
   * Applies the rule to a response of {@code pick}'s call: hands its load report to the pick and
   * counts it, then judges the status. Call it before completing the pick (a completed pick ignores
   * the report). Never throws on any status or header value; allocates nothing beyond what the
   * parse of a well-formed report keeps per thread.
   *
   * @param status the response's status code; 0 or less when the call produced none (then only the
   *     report is read, and the result is {@link #SUCCESS}: what else ended the call decides)
   * @param loadReport the value of the response's {@value LoadReportHeader#NAME} header, or null
   * @return {@link #SUCCESS}, or {@code status} when it is a failure code: complete the pick with
   *     {@code failure(new FailureStatusException(status, target.id()))}
   */
  public int read(Pick pick, int status, @Nullable String loadReport) {
    LoadReportHeader.Outcome report = LoadReportHeader.applyTo(pick, loadReport);
    if (report == LoadReportHeader.Outcome.PARSED) {
      meters.count(LoadReportMeters.Result.PARSED);
    } else if (report == LoadReportHeader.Outcome.MALFORMED) {
      meters.count(LoadReportMeters.Result.MALFORMED); // ignored: the target is judged by what the balancer measures
    }
    return isFailureStatus(status) ? status : SUCCESS;
  }

  @Override
  public String toString() {
    return "OutcomeRule{failureStatusCodes=" + Arrays.toString(failureStatusCodes) + "}";
  }
}
