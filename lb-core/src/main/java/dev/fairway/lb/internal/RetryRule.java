package dev.fairway.lb.internal;

import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The retry rules every HTTP integration shares (the OkHttp interceptor and the client adapters),
 * each a pure function of its arguments, after OkHttp's {@code RetryAndFollowUpInterceptor}
 * ({@code recover}, {@code isRecoverable}, {@code followUpRequest}). An integration reads its own
 * request type into a method name, an optional mark ({@code Boolean.TRUE} idempotent, {@code
 * Boolean.FALSE} not, null: decided by the method) and whether the body can be written twice, and
 * asks here; it keeps only its loop. Immutable and thread-safe. Not public API (see the package
 * documentation).
 *
 * <ul>
 *   <li>A request that never left (no connection, or a TLS handshake that did not get as far as the
 *       certificate) may go to another target whatever its method.
 *   <li>One that may have reached a server goes again only if it is resendable: idempotent, with a
 *       body that can be written twice. The same holds after a retryable status (502, 503, 504
 *       unless configured).
 *   <li>A certificate the client rejects is never retried: every instance of a service shares it.
 *   <li>A hedge (a second copy while the first is still in flight) needs more than a retry: GET,
 *       HEAD and OPTIONS, or a request marked idempotent. PUT and DELETE are retried but not hedged
 *       unless marked: two concurrent writes may interleave with another writer's.
 * </ul>
 *
 * <p>A decision to retry is a {@code reason} string (the {@code reason} tag of {@code
 * fairway.retries}); {@code null} means: no further attempt, the outcome stands.
 */
public final class RetryRule {
  /** Retry reason: the attempt never reached a server. */
  public static final String CONNECT_FAILURE = "connect_failure";
  /** Retry reason: an I/O failure after the request may have been sent. */
  public static final String IO_FAILURE = "io_failure";

  private final int maxAttempts;
  private final @Nullable String[] retryReason = new String[600]; // "status_<code>" for retryable codes, made once
  private final IntervalFunction backoff;

  /**
   * @param maxAttempts attempts per call, the first included (1 = no retry); checked by the caller's builder
   * @param retryStatusCodes statuses after which a resendable request goes to another target, each 100..599
   * @param backoff the wait before each new round over every target
   * @throws IllegalArgumentException naming a status code outside 100..599
   */
  public RetryRule(int maxAttempts, int[] retryStatusCodes, IntervalFunction backoff) {
    Args.requireArgument(maxAttempts >= 1, "maxAttempts", maxAttempts, "at least 1");
    this.maxAttempts = maxAttempts;
    for (int code : retryStatusCodes) {
      Args.requireArgument(code >= 100 && code <= 599, "retryStatusCodes", code, "100..599");
      retryReason[code] = "status_" + code;
    }
    this.backoff = backoff;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  /**
   * After attempt number {@code attempts} failed with {@code e}: the retry reason, or null to fail
   * the call with {@code e}.
   */
  public @Nullable String onIOException(IOException e, boolean resendable, int attempts) {
    if (attempts >= maxAttempts) {
      return null;
    }
    FailureKind kind = Failures.classify(e);
    if (!kind.worthRetrying()) {
      return null;
    }
    if (kind.neverSent()) {
      return CONNECT_FAILURE;
    }
    return resendable ? IO_FAILURE : null;
  }

  /** After attempt number {@code attempts} answered {@code code}: the retry reason, or null to return it. */
  public @Nullable String onResponse(int code, boolean resendable, int attempts) {
    if (attempts >= maxAttempts || !resendable || code < 0 || code >= retryReason.length) {
      return null;
    }
    return retryReason[code];
  }

  /** The wait in milliseconds before round {@code round} (1, 2, ...) over every target. */
  public long backoffMillis(int round) {
    Long millis = backoff.apply(round);
    return millis == null ? 0 : Math.max(0, millis);
  }

  /**
   * True if this call tried every member of the balancer, so a new round after a backoff may
   * succeed where picking again at once would not. False if any member is untried (ejected,
   * unhealthy, at its concurrency limit) or there are none (a closed balancer): waiting would not
   * help, and the outcome so far stands.
   */
  public static boolean everyTargetTried(List<TargetStatus> members, @Nullable Set<Target> tried) {
    if (members.isEmpty() || tried == null) {
      return false;
    }
    for (TargetStatus member : members) {
      if (!tried.contains(member.target())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether a request is safe to send twice: its mark if it has one, else its method (GET, HEAD,
   * OPTIONS, TRACE, PUT and DELETE are). Methods are case-sensitive, as HTTP's are.
   */
  public static boolean isIdempotent(String method, @Nullable Boolean marked) {
    if (marked != null) {
      return marked;
    }
    return switch (method) {
      case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE" -> true;
      default -> false;
    };
  }

  /**
   * True if the request may be sent again after it may have reached a server: it is idempotent and
   * its body, if any, can be written twice ({@code bodyRepeatable}; true for no body).
   */
  public static boolean isResendable(String method, @Nullable Boolean marked, boolean bodyRepeatable) {
    return bodyRepeatable && isIdempotent(method, marked);
  }

  /**
   * Whether a second copy may be in flight at the same time as the first (a hedge): GET, HEAD and
   * OPTIONS, or any request marked idempotent, with a body that can be written twice; never one
   * marked not idempotent.
   */
  public static boolean isHedgeable(String method, @Nullable Boolean marked, boolean bodyRepeatable) {
    if (!bodyRepeatable) {
      return false;
    }
    if (marked != null) {
      return marked;
    }
    return switch (method) {
      case "GET", "HEAD", "OPTIONS" -> true;
      default -> false;
    };
  }

  @Override
  public String toString() {
    return "RetryRule{maxAttempts=" + maxAttempts + "}";
  }
}
