package dev.fairway.lb.okhttp;

import dev.fairway.lb.internal.RetryRule;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.jspecify.annotations.Nullable;

/**
 * Reads an OkHttp request into what {@link RetryRule} decides on: its method, its {@link
 * Idempotency} tag, and whether its body can be written twice (a one-shot or duplex body cannot).
 */
final class RequestSafety {
  private RequestSafety() {}

  /** True if the request may be sent again after it may have reached a server ({@link RetryRule#isResendable}). */
  static boolean isResendable(Request request) {
    return RetryRule.isResendable(request.method(), mark(request), repeatable(request.body()));
  }

  /** True if a second copy may be in flight beside the first ({@link RetryRule#isHedgeable}). */
  static boolean isHedgeable(Request request) {
    return RetryRule.isHedgeable(request.method(), mark(request), repeatable(request.body()));
  }

  private static @Nullable Boolean mark(Request request) {
    Idempotency tagged = request.tag(Idempotency.class);
    return tagged == null ? null : tagged == Idempotency.IDEMPOTENT;
  }

  private static boolean repeatable(@Nullable RequestBody body) {
    return body == null || !(body.isOneShot() || body.isDuplex());
  }
}
