package dev.fairway.lb.okhttp;

import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.internal.FailureKind;
import dev.fairway.lb.internal.Failures;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.jspecify.annotations.Nullable;

/**
 * The interceptor's retry decisions, each a pure function of its arguments (after OkHttp's
 * {@code RetryAndFollowUpInterceptor.recover}/{@code isRecoverable}/{@code followUpRequest}), so
 * {@link BalancedCall}'s loop only asks and tests call them directly. Immutable and thread-safe.
 *
 * <p>A decision to retry is a {@code reason} string (the {@code reason} tag of
 * {@code fairway.retries}); {@code null} means: no further attempt, the outcome stands.
 */
final class RetryPolicy {
  private final int maxAttempts;
  private final boolean[] failureStatus = new boolean[600];
  private final @Nullable String[] retryReason = new String[600]; // "status_<code>" for retryable codes, made once
  private final IntervalFunction backoff;

  RetryPolicy(int maxAttempts, int[] failureStatusCodes, int[] retryStatusCodes, IntervalFunction backoff) {
    this.maxAttempts = maxAttempts;
    for (int code : failureStatusCodes) {
      failureStatus[code] = true;
    }
    for (int code : retryStatusCodes) {
      retryReason[code] = "status_" + code;
    }
    this.backoff = backoff;
  }

  int maxAttempts() {
    return maxAttempts;
  }

  /**
   * After attempt number {@code attempts} failed with {@code e}: the retry reason, or null to fail
   * the call with {@code e}. A request that never left (no connection, or a TLS handshake that did
   * not get as far as the certificate) may go to another target whatever its method; one that may
   * have reached a server only if it is {@code resendable}. A certificate the client rejects is not
   * retried: every instance of a service shares it (OkHttp does not retry it either).
   */
  @Nullable String onIOException(IOException e, boolean resendable, int attempts) {
    if (attempts >= maxAttempts) {
      return null;
    }
    FailureKind kind = Failures.classify(e);
    if (!kind.worthRetrying()) {
      return null;
    }
    if (kind.neverSent()) {
      return CallMetrics.CONNECT_FAILURE;
    }
    return resendable ? CallMetrics.IO_FAILURE : null;
  }

  /** After attempt number {@code attempts} answered {@code code}: the retry reason, or null to return it. */
  @Nullable String onResponse(int code, boolean resendable, int attempts) {
    if (attempts >= maxAttempts || !resendable || code < 0 || code >= retryReason.length) {
      return null;
    }
    return retryReason[code];
  }

  /** True if {@code code} is reported to passive health as a failure of the target. */
  boolean isFailure(int code) {
    return code >= 0 && code < failureStatus.length && failureStatus[code];
  }

  /** The wait in milliseconds before round {@code round} (1, 2, ...) over every target. */
  long backoffMillis(int round) {
    Long millis = backoff.apply(round);
    return millis == null ? 0 : Math.max(0, millis);
  }

  /**
   * True if this call tried every member of the balancer, so a new round after a backoff may
   * succeed where picking again at once would not. False if any member is untried (ejected,
   * unhealthy, at its concurrency limit) or there are none (a closed balancer): waiting would not
   * help, and the outcome so far stands.
   */
  static boolean everyTargetTried(List<TargetStatus> members, @Nullable Set<Target> tried) {
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
   * Whether a request is safe to send twice: the {@link Idempotency} tag if present, else its
   * method (GET, HEAD, OPTIONS, TRACE, PUT and DELETE are).
   */
  static boolean isIdempotent(Request request) {
    Idempotency tagged = request.tag(Idempotency.class);
    if (tagged != null) {
      return tagged == Idempotency.IDEMPOTENT;
    }
    return switch (request.method()) {
      case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE" -> true;
      default -> false;
    };
  }

  /**
   * True if the request may be sent again after it may have reached a server: it is idempotent and
   * its body (if any) can be written twice (a one-shot or duplex body cannot).
   */
  static boolean isResendable(Request request) {
    RequestBody body = request.body();
    return isIdempotent(request) && (body == null || !(body.isOneShot() || body.isDuplex()));
  }

  /**
   * Whether a second copy may be in flight at the same time as the first (a hedge): GET, HEAD and
   * OPTIONS, or any request tagged {@link Idempotency#IDEMPOTENT}, with a body that can be written
   * twice; never one tagged {@link Idempotency#NON_IDEMPOTENT}. PUT and DELETE are retried but not
   * hedged unless tagged: two concurrent writes may interleave with another writer's.
   */
  static boolean isHedgeable(Request request) {
    RequestBody body = request.body();
    if (body != null && (body.isOneShot() || body.isDuplex())) {
      return false;
    }
    Idempotency tagged = request.tag(Idempotency.class);
    if (tagged != null) {
      return tagged == Idempotency.IDEMPOTENT;
    }
    return switch (request.method()) {
      case "GET", "HEAD", "OPTIONS" -> true;
      default -> false;
    };
  }

  @Override
  public String toString() {
    return "RetryPolicy{maxAttempts=" + maxAttempts + "}";
  }
}
