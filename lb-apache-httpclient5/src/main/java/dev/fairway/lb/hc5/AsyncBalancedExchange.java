package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecRuntime;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.impl.classic.RequestFailedException;
import org.apache.hc.core5.concurrent.CancellableDependency;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.nio.AsyncDataConsumer;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.nio.entity.DiscardingEntityConsumer;
import org.apache.hc.core5.http.support.BasicRequestBuilder;
import org.apache.hc.core5.util.TimeValue;
import org.jspecify.annotations.Nullable;

/**
 * One balanced exchange of the async client: the classic {@link BalancedExchange}'s rules, driven by
 * callbacks. Each attempt passes a scope with the picked target's route down the chain; its {@link
 * Attempt} completes when the exchange completes or fails (after the caller's consumer took the
 * whole body, never at headers time), and is released when the caller cancelled. Each attempt's
 * scope carries its own {@link AttemptCancellation}, so that a cancel reaches the exchange in
 * progress on a pooled connection too.
 *
 * <p>Where the async client differs from the classic one: a retryable status is retried only when
 * a target this exchange has not tried can be picked at once (the pick is taken before the
 * response is discarded; otherwise the response goes to the caller), so no backoff round follows a
 * status; a failure without a response may start a new round after the backoff, scheduled on the
 * client's own scheduler. A request whose entity cannot be produced twice is never retried.
 *
 * <p>A hedgeable request's first attempt on a service that hedges runs as an {@link
 * AsyncHedgeRace} instead: the race sends the copies and hands this exchange the callbacks of the
 * one copy whose outcome the caller gets ({@link #callback}); the rest of the exchange (retries
 * included) goes on as for any attempt.
 *
 * <p>The callbacks of one attempt arrive one after another, and the next attempt starts from the
 * last callback of the one before (or from the client's scheduler), so the fields need no lock.
 * During a race the fields are touched under the race's monitor (the hedge is counted) or by the
 * one copy the race handed on, after the race's monitor ordered it.
 */
final class AsyncBalancedExchange {
  private final HttpRequest request;
  private final @Nullable AsyncEntityProducer entityProducer;
  private final AsyncExecChain.Scope scope;
  private final AsyncExecChain chain;
  private final AsyncExecCallback caller;
  private final ServiceRoute route;
  private final BalancingExecHandler handler;
  private final boolean resendable;
  private final boolean repeatable; // the entity, if any, can be produced again
  private final BooleanSupplier cancelled;
  private final @Nullable String affinityKey; // the request's, read once: every pick of this exchange uses it
  private final boolean hedgeable; // the service hedges, and this request may have a second copy in flight
  private boolean learning; // an unraced hedgeable first attempt: a usable response's time teaches the delay

  private @Nullable Set<Target> tried;
  private @Nullable List<IOException> failures;
  private @Nullable NoTargetAvailableException noTarget;
  private @Nullable String retryReason; // why the next attempt is made (fairway.retries' reason)
  private long pickStartNanos; // when the latest pick began, by the meters' clock: a no_target timing starts here
  private int attempts;
  private int rounds;

  AsyncBalancedExchange(HttpRequest request, @Nullable AsyncEntityProducer entityProducer, AsyncExecChain.Scope scope,
      AsyncExecChain chain, AsyncExecCallback caller, ServiceRoute route, BalancingExecHandler handler) {
    this.request = request;
    this.entityProducer = entityProducer;
    this.scope = scope;
    this.chain = chain;
    this.caller = caller;
    this.route = route;
    this.handler = handler;
    this.repeatable = entityProducer == null || entityProducer.isRepeatable();
    this.resendable = RetryRule.isResendable(request.getMethod(), null, repeatable);
    this.cancelled = scope.cancellableDependency::isCancelled;
    this.affinityKey = handler.affinityKeyOf(request);
    this.hedgeable = route.hedging != null && isHedgeable(request.getMethod(), entityProducer);
  }

  /**
   * True if a second copy of a request may be in flight beside the first (lb-core's {@link
   * RetryRule#isHedgeable}, by its method: GET, HEAD, OPTIONS), and it has no entity: one entity
   * producer cannot feed two exchanges at once.
   */
  static boolean isHedgeable(String method, @Nullable AsyncEntityProducer entityProducer) {
    return entityProducer == null && RetryRule.isHedgeable(method, null, true);
  }

  void start() {
    if (cancelled.getAsBoolean()) {
      caller.failed(new RequestFailedException("Request aborted"));
      return;
    }
    route.callStarted(hedgeable);
    Pick first;
    long start = route.meters.startNanos();
    try {
      first = route.loadBalancer.pick(affinityKey, null);
    } catch (NoTargetAvailableException e) {
      route.meters.noTarget(start);
      caller.failed(e);
      return;
    }
    ServiceHedging hedging = route.hedging;
    if (hedgeable && hedging != null) {
      hedging.maintain(first.target(), hedging.nowNanos());
      long delay = hedging.delayNanos(first.target());
      if (delay >= 0) {
        new AsyncHedgeRace(this, hedging, attempt(first)).start(delay);
        return;
      }
      learning = true; // no delay known yet: sent alone, and a percentile delay learns from its time
    }
    send(first);
  }

  /** After a failure without a response: the next attempt, a new round after the backoff, or the end. */
  private void next() {
    if (cancelled.getAsBoolean()) {
      caller.failed(lastFailureOr(new RequestFailedException("Request aborted")));
      return;
    }
    if (!route.budget.tryWithdraw()) {
      route.meters.budgetExhausted();
      giveUp();
      return;
    }
    pickStartNanos = route.meters.startNanos();
    try {
      send(retried(route.loadBalancer.pick(affinityKey, tried)));
      return;
    } catch (NoTargetAvailableException e) {
      noTarget = e;
    }
    Set<Target> all = tried;
    if (all == null || !RetryRule.everyTargetTried(route.loadBalancer.status(), all)) {
      route.budget.refund();
      route.meters.noTarget(pickStartNanos);
      giveUp();
      return;
    }
    long millis = handler.retries.backoffMillis(++rounds);
    all.clear();
    scope.scheduler.scheduleExecution(request, entityProducer, scope,
        (r, e, s, c) -> afterBackoff(), caller, TimeValue.ofMilliseconds(millis));
  }

  private void afterBackoff() {
    if (cancelled.getAsBoolean()) {
      route.budget.refund();
      caller.failed(lastFailureOr(new RequestFailedException("Request aborted")));
      return;
    }
    try {
      Pick pick = route.loadBalancer.pick(affinityKey, null);
      noTarget = null;
      send(retried(pick));
    } catch (NoTargetAvailableException e) {
      noTarget = e;
      route.budget.refund();
      route.meters.noTarget(pickStartNanos); // timed with the backoff, as the classic exchange's
      giveUp();
    }
  }

  /** {@code pick}, the next attempt's after a retry was decided: counted by its reason. */
  private Pick retried(Pick pick) {
    String reason = retryReason;
    if (reason != null) {
      route.meters.retry(reason);
    }
    return pick;
  }

  private void send(Pick pick) {
    Attempt attempt = attempt(pick);
    proceed(attempt, new AttemptCancellation(scope.cancellableDependency), scope.clientContext, scope.execRuntime,
        new AttemptCallback(attempt));
  }

  /** The next attempt of this exchange, on {@code pick}: counted toward {@code maxAttempts}. */
  Attempt attempt(Pick pick) {
    attempts++;
    return new Attempt(pick, route, cancelled);
  }

  /**
   * Sends {@code attempt}'s copy of the request down the chain, to its target, with the given
   * cancellation, context and runtime (the exchange's own, or a race copy's); {@code callback} gets
   * its outcome, also a failure to send it at all.
   */
  void proceed(Attempt attempt, CancellableDependency cancellation, HttpClientContext context,
      AsyncExecRuntime runtime, AsyncExecCallback callback) {
    try {
      TargetRoutes.Entry to = route.targets.of(attempt.target());
      HttpRequest copy = BasicRequestBuilder.copy(request).setAuthority(to.authority).build();
      AsyncExecChain.Scope attemptScope = new AsyncExecChain.Scope(scope.exchangeId,
          to.route(scope.route), scope.originalRequest, cancellation, context, runtime,
          scope.scheduler, scope.execCount);
      chain.proceed(copy, entityProducer, attemptScope, callback);
    } catch (IOException | HttpException | RuntimeException e) {
      callback.failed(e);
    }
  }

  /** The callbacks that carry {@code attempt}'s outcome into this exchange, as for any attempt (retry rules included). */
  AsyncExecCallback callback(Attempt attempt) {
    return new AttemptCallback(attempt);
  }

  /**
   * A race sent a hedge: both copies' targets count as tried, so that a retry after the race goes
   * elsewhere while it can. Under the race's monitor, before either copy's outcome is handed on.
   */
  void hedgeSent(Target first, Target hedge) {
    tried = tried(first);
    tried = tried(hedge);
  }

  /**
   * A race copy failed while the other could still win, and then the other failed too: the earlier
   * failure travels as a suppressed exception of the one the caller gets.
   */
  void failedBefore(IOException failure) {
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(failure);
  }

  /** The caller cancelled the exchange (its future). */
  boolean cancelled() {
    return cancelled.getAsBoolean();
  }

  @Nullable String affinityKey() {
    return affinityKey;
  }

  ServiceRoute route() {
    return route;
  }

  /** The exchange's scope, as the chain handed it to Fairway. */
  AsyncExecChain.Scope scope() {
    return scope;
  }

  /** The exchange ends with what it has, when no further attempt can be made. */
  private void giveUp() {
    if (failures == null) {
      caller.failed(noTarget != null ? noTarget : new IOException("retry budget of " + route.host + " exhausted"));
      return;
    }
    IOException last = lastFailure(failures);
    if (noTarget != null) {
      last.addSuppressed(noTarget);
    }
    caller.failed(last);
  }

  private Exception lastFailureOr(Exception otherwise) {
    return failures == null ? otherwise : lastFailure(failures);
  }

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

  /** One attempt's callbacks: decides at the headers, completes the attempt at the exchange's end. */
  private final class AttemptCallback implements AsyncExecCallback {
    private final Attempt attempt;
    private @Nullable Pick retryOn; // set when a retryable status is discarded: the next attempt's pick
    private boolean delivered; // the response went to the caller: no retry any more
    private boolean ended; // completed or failed was seen: a second signal (a chain that both threw and called back) is ignored

    AttemptCallback(Attempt attempt) {
      this.attempt = attempt;
    }

    @Override
    public @Nullable AsyncDataConsumer handleResponse(HttpResponse response, @Nullable EntityDetails entityDetails)
        throws HttpException, IOException {
      Header report = response.getFirstHeader(LoadReportHeader.NAME);
      attempt.responded(response.getCode(), report == null ? null : report.getValue());
      ServiceHedging hedging = route.hedging;
      if (learning && attempts == 1 && hedging != null && !route.outcomes.isFailureStatus(response.getCode())) {
        hedging.recordResponse(attempt.target(), attempt.sentNanos());
      }
      String reason = handler.retries.onResponse(response.getCode(), resendable, attempts);
      if (reason != null && !cancelled.getAsBoolean()) {
        retryReason = reason;
        Pick next = pickUntried();
        if (next != null) {
          attempt.complete(null); // reports the failure status now, before the next attempt is sent
          retryOn = next;
          return new DiscardingEntityConsumer<>();
        }
      }
      delivered = true;
      try {
        return caller.handleResponse(response, entityDetails);
      } catch (RuntimeException e) {
        attempt.release(); // the caller's consumer failed: not the target's doing
        throw e;
      }
    }

    /** A pick on a target this exchange has not tried, paid from the budget; null if there is none now. */
    private @Nullable Pick pickUntried() {
      Set<Target> exclude = tried(attempt.target());
      tried = exclude;
      if (!route.budget.tryWithdraw()) {
        route.meters.budgetExhausted();
        return null;
      }
      long start = route.meters.startNanos();
      try {
        return retried(route.loadBalancer.pick(affinityKey, exclude));
      } catch (NoTargetAvailableException e) {
        route.budget.refund();
        route.meters.noTarget(start);
        return null;
      }
    }

    @Override
    public void handleInformationResponse(HttpResponse response) throws HttpException, IOException {
      caller.handleInformationResponse(response);
    }

    @Override
    public void completed() {
      if (ended) {
        return;
      }
      ended = true;
      Pick next = retryOn;
      if (next == null) {
        attempt.complete(null);
        caller.completed();
        return;
      }
      retryOn = null;
      sendRetry(next);
    }

    @Override
    public void failed(Exception cause) {
      if (ended) {
        return;
      }
      ended = true;
      IOException failure = cause instanceof IOException io ? io : new ClientProtocolException(cause.getMessage(), cause);
      Pick next = retryOn;
      if (next != null) { // the discarded body of a retried status failed: that attempt is complete already
        retryOn = null;
        sendRetry(next);
        return;
      }
      if (cancelled.getAsBoolean() || Failures.isInterruption(failure)) {
        attempt.cancel(); // the caller's doing, not the target's
        caller.failed(cause);
        return;
      }
      if (failure instanceof ConnectionRequestTimeoutException) {
        attempt.release(); // the client's own pool had no connection in time: not the target's doing
        retryReason = null;
      } else {
        attempt.complete(failure);
        retryReason = delivered || !repeatable ? null : handler.retries.onIOException(failure, resendable, attempts);
      }
      if (failures == null) {
        failures = new ArrayList<>(2);
      }
      failures.add(failure);
      if (retryReason == null) {
        caller.failed(lastFailure(failures));
        return;
      }
      tried = tried(attempt.target());
      // The endpoint leased for the failed target's route would otherwise be reused for the next
      // target (the async connect step connects only an endpoint it has not got), as HttpClient's
      // own retry element discards it too.
      scope.execRuntime.discardEndpoint();
      if (entityProducer != null) {
        entityProducer.releaseResources();
      }
      next();
    }

    /** The retry of a discarded status on the pick taken for it, unless the caller cancelled meanwhile. */
    private void sendRetry(Pick next) {
      if (cancelled.getAsBoolean()) {
        next.release();
        caller.failed(new RequestFailedException("Request aborted"));
        return;
      }
      // The connection to the target that answered goes back to the pool (or is closed if not
      // reusable): the next attempt needs one to its own target, and the async connect step only
      // connects an endpoint it has not got.
      scope.execRuntime.releaseEndpoint();
      if (entityProducer != null) {
        entityProducer.releaseResources(); // repeatable: produced again from the start
      }
      send(next);
    }
  }
}
