package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.jspecify.annotations.Nullable;

/**
 * One balanced call: picks a target, sends, and when {@link RetryPolicy} says so, picks another
 * target this call has not tried. Owns the call's state (tried targets, the response kept from a
 * retryable status, earlier failures, attempts); each attempt's pick and timing live in its own
 * {@link Attempt}, completed before the next attempt picks, so passive health has heard of attempt
 * N when attempt N+1 chooses. Used by one thread, once.
 */
final class BalancedCall {
  private final Interceptor.Chain chain;
  private final Call call;
  private final Request request;
  private final ServiceRoute route;
  private final LoadBalancingInterceptor interceptor;
  private final @Nullable String affinityKey;
  private final boolean resendable;
  private final boolean hedgeable; // the service hedges, and this request may be hedged

  private @Nullable Set<Target> tried; // allocated on the first retry only
  private @Nullable Response previous; // a retryable-status response, returned if no further attempt is made
  private @Nullable List<IOException> failures; // every attempt's failure, oldest first; the last is thrown
  private @Nullable NoTargetAvailableException noTarget;
  private @Nullable String retryReason; // why the next attempt is made
  private int attempts;
  private int rounds; // backoff rounds over every target

  BalancedCall(Interceptor.Chain chain, ServiceRoute route, LoadBalancingInterceptor interceptor) {
    this.chain = chain;
    this.call = chain.call();
    this.request = chain.request();
    this.route = route;
    this.interceptor = interceptor;
    this.affinityKey = interceptor.affinityKey == null ? null : interceptor.affinityKey.apply(request);
    this.resendable = RequestSafety.isResendable(request);
    this.hedgeable = route.hedging != null && RequestSafety.isHedgeable(request);
  }

  Response proceed() throws IOException {
    if (Thread.currentThread().isInterrupted()) {
      // OkHttp would fail it anyway (its connect step or Okio's first write): take no slot at all.
      throw new InterruptedIOException("interrupted");
    }
    route.callStarted(hedgeable);
    try {
      for (;;) {
        if (attempts > 0 && Thread.currentThread().isInterrupted()) {
          throw Interrupts.end(call, null); // no further attempt for a caller that stopped waiting
        }
        Pick pick = nextPick();
        if (pick == null) {
          return giveUp();
        }
        Response response = attempt(new Attempt(pick, call, route));
        if (response != null) {
          return response;
        }
      }
    } finally {
      if (previous != null) {
        previous.close(); // the caller does not get it: a later attempt failed or threw
      }
    }
  }

  /** The next attempt's pick, or null when no further attempt may be made. */
  private @Nullable Pick nextPick() throws IOException {
    if (attempts > 0 && !route.budget.tryWithdraw()) {
      route.meters.budgetExhausted();
      return null;
    }
    long start = route.meters.startNanos();
    Pick pick = pickOrWait();
    if (pick == null) {
      route.meters.noTarget(start);
    } else if (attempts > 0 && retryReason != null) { // set whenever a retry was decided
      route.meters.retry(retryReason);
    }
    return pick;
  }

  /**
   * A pick among the targets not tried yet; when there are none left because this call tried them
   * all, a new round over all of them after the backoff. Null if no target can be had.
   */
  private @Nullable Pick pickOrWait() throws IOException {
    try {
      return route.loadBalancer.pick(affinityKey, tried);
    } catch (NoTargetAvailableException e) {
      noTarget = e;
    }
    if (tried == null || !RetryRule.everyTargetTried(route.loadBalancer.status(), tried)) {
      return null; // ejected, closed, at capacity: waiting would not bring back an untried target
    }
    interceptor.sleeper.sleep(interceptor.retries.backoffMillis(++rounds), call);
    tried.clear();
    try {
      Pick pick = route.loadBalancer.pick(affinityKey, null);
      noTarget = null;
      return pick;
    } catch (NoTargetAvailableException e) {
      noTarget = e;
      return null;
    }
  }

  /** The response to return, or null if a retry was decided (then the attempt is complete). */
  private @Nullable Response attempt(Attempt attempt) throws IOException {
    attempts++;
    Response response;
    if (previous != null) {
      previous.close(); // its attempt is complete; only its connection is still held
      previous = null;
    }
    Attempt answered = attempt; // the hedge, if a hedge answered for this attempt
    try {
      if (!hedgeable) {
        response = chain.proceed(rewrite(request, attempt.target()));
      } else {
        ServiceHedging hedging = hedging();
        long delay = -1; // a retry is never hedged
        if (attempts == 1) {
          hedging.maintain(attempt.target(), attempt.sentNanos());
          delay = hedging.delayNanos(attempt.target());
        }
        if (delay < 0) { // a retry, or no delay known yet: sent here, and a percentile delay learns from its time
          response = chain.proceed(rewrite(request, attempt.target()));
          if (!route.outcomes.isFailureStatus(response.code())) {
            hedging.recordResponse(attempt.target(), attempt.sentNanos());
          }
        } else { // the attempt's pick moves to the race's first leg
          HedgeRace race = new HedgeRace(this, attempt);
          try {
            response = race.race(delay);
            answered = race.chosen();
          } finally {
            Target hedge = race.hedgeTarget();
            if (hedge != null) { // a hedge counts as an attempt on a target this call tried
              attempts++;
              tried = tried(hedge);
            }
          }
        }
      }
      answered.responded(response.code(), FirstHeader.value(response.headers(), LoadReportHeader.NAME));
      if (resendable && attempts < interceptor.retries.maxAttempts()) {
        prefetchSmallBody(response);
      }
    } catch (IOException e) {
      if (Interrupts.interrupted(e)) {
        throw interrupted(answered, e);
      }
      answered.complete(e);
      retryReason = call.isCanceled() ? null : interceptor.retries.onIOException(e, resendable, attempts);
      return failed(answered.target(), e);
    } catch (RuntimeException | Error e) {
      answered.abandon();
      throw e;
    } catch (Exception e) { // a checked exception Kotlin let through: OkHttp 5's connect step throws InterruptedException
      if (Interrupts.interrupted(e)) {
        throw interrupted(answered, e);
      }
      answered.abandon();
      throw new UndeclaredThrowableException(e, "a call to " + route.host + " threw a checked exception it does not declare");
    }
    retryReason = interceptor.retries.onResponse(response.code(), resendable, attempts);
    if (retryReason == null) {
      return track(response, answered);
    }
    answered.complete(null); // reports the failure status now, before the next pick
    previous = response;
    tried = tried(answered.target());
    return null;
  }

  /** The caller's call. */
  Call call() {
    return call;
  }

  ServiceRoute route() {
    return route;
  }

  /** The service's hedging; only for a hedgeable call. */
  ServiceHedging hedging() {
    ServiceHedging hedging = route.hedging;
    if (hedging == null) {
      throw new IllegalStateException("a race on " + route.host + ", which does not hedge");
    }
    return hedging;
  }

  @Nullable String affinityKey() {
    return affinityKey;
  }

  boolean isFailure(int code) {
    return route.outcomes.isFailureStatus(code);
  }

  /**
   * The caller was interrupted during {@code attempt}: the call is cancelled (so a hedge in flight
   * is cancelled too, and released), the attempt released, and the exception to throw returned.
   */
  private InterruptedIOException interrupted(Attempt attempt, Throwable cause) {
    InterruptedIOException e = Interrupts.end(call, cause);
    attempt.complete(e); // released: the call is cancelled
    return e;
  }

  /** Records {@code e}; returns null to retry, or throws it with the earlier failures suppressed. */
  private @Nullable Response failed(Target target, IOException e) throws IOException {
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(e);
    if (retryReason == null) {
      throw lastFailure(failures);
    }
    tried = tried(target);
    return null;
  }

  /** The outcome so far, when no further attempt can be made. */
  private Response giveUp() throws IOException {
    if (Thread.currentThread().isInterrupted()) { // say, interrupted while waiting for a slot (concurrency limited)
      throw Interrupts.end(call, noTarget);
    }
    if (previous != null) {
      Response last = previous;
      previous = null;
      return last;
    }
    if (failures == null) {
      throw noTarget != null ? noTarget : new IOException("retry budget of " + route.host + " exhausted");
    }
    IOException last = lastFailure(failures);
    if (noTarget != null) {
      last.addSuppressed(noTarget);
    }
    throw last;
  }

  /** The latest failure, carrying the earlier ones as suppressed exceptions (as OkHttp's own retries do). */
  private static IOException lastFailure(List<IOException> failures) {
    IOException last = failures.get(failures.size() - 1);
    for (int i = 0; i < failures.size() - 1; i++) {
      last.addSuppressed(failures.get(i));
    }
    return last;
  }

  private Set<Target> tried(Target target) {
    Set<Target> set = tried != null ? tried : new HashSet<>(8);
    set.add(target);
    return set;
  }

  /**
   * The request for {@code target}. A target OkHttp will not put in a URL is that target's failure,
   * like a connection that could not be made (so it is ejected, and the call moves on), not a bug.
   */
  Request rewrite(Request request, Target target) throws ConnectException {
    HttpUrl url;
    try {
      url = route.urls.rewrite(request.url(), target);
    } catch (IllegalArgumentException e) {
      ConnectException unaddressable = new ConnectException(
          "target " + target.id() + " of " + route.host + " has an address OkHttp cannot use: " + e.getMessage());
      unaddressable.initCause(e);
      throw unaddressable;
    }
    Request.Builder builder = request.newBuilder().url(url);
    if (interceptor.keepLogicalHostHeader && request.header("Host") == null) {
      builder.header("Host", hostHeader(request.url()));
    }
    return builder.build();
  }

  private static String hostHeader(HttpUrl url) {
    return url.port() == HttpUrl.defaultPort(url.scheme()) ? url.host() : url.host() + ":" + url.port();
  }

  /**
   * Reads a small body with a known length into the source's buffer now, so a connection lost
   * mid-body fails this attempt (and is retried) instead of failing the caller's read later.
   */
  private void prefetchSmallBody(Response response) throws IOException {
    if (interceptor.bufferBodiesUpTo == 0 || !promisesBody(response)) {
      return;
    }
    ResponseBody body = response.body();
    long length = body.contentLength();
    if (length > 0 && length <= interceptor.bufferBodiesUpTo) {
      try {
        if (!body.source().request(length)) {
          throw new ProtocolException("unexpected end of stream: " + length + "-byte body cut short");
        }
      } catch (IOException | RuntimeException e) {
        response.close();
        throw e;
      }
    }
  }

  /** Wraps the body so the attempt completes when the body is done; completes at once if there is none. */
  private static Response track(Response response, Attempt attempt) {
    ResponseBody body = response.body();
    if (!promisesBody(response) || body.contentLength() == 0) {
      attempt.complete(null);
      return response;
    }
    return response.newBuilder().body(new TrackedResponseBody(body, attempt)).build();
  }

  private static boolean promisesBody(Response response) {
    int code = response.code();
    return !"HEAD".equals(response.request().method()) && code != 204 && code != 304 && (code < 100 || code >= 200);
  }
}
