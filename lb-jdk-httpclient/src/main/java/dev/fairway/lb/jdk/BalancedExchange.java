package dev.fairway.lb.jdk;

import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URISyntaxException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.PushPromiseHandler;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * One balanced call: picks a target, sends, and when lb-core's {@link RetryRule} says so, picks
 * another target this call has not tried. It owns the call's state (tried targets, the response
 * kept from a retryable status, earlier failures, attempts); each attempt's pick lives in its own
 * {@link Attempt}, completed before the next attempt picks, so passive health has heard of attempt
 * N when attempt N+1 chooses.
 *
 * <p>Two drivers share the decisions ({@link #nextPick}, {@link #failed}, {@link #answered}): {@link
 * #send} loops on the caller's thread, {@link #sendAsync} chains the delegate's futures. Either is
 * called once per instance. A hedgeable request's first attempt is raced against a hedge by a
 * {@link HedgeRace}, which hands the outcome it chose back to {@link #attemptEnded}; {@code send}
 * then runs on the async driver and waits.
 */
final class BalancedExchange<T> {
  private static final Executor DIRECT = Runnable::run;

  final ServiceRoute route;
  private final FairwayHttpClient client;
  private final HttpRequest request;
  private final BodyHandler<T> handler;
  private final @Nullable PushPromiseHandler<T> pushPromiseHandler;
  private final boolean resendable;
  final @Nullable String affinityKey; // the request's, read once: every pick of this call uses it
  private final boolean hedgeable; // the service hedges, and this request may be hedged

  private @Nullable Set<Target> tried; // allocated on the first retry only
  private @Nullable HttpResponse<T> previous; // a retryable-status response, replayed if no further attempt is made
  private byte @Nullable [] previousBody;
  private @Nullable List<IOException> failures; // every attempt's failure, oldest first; the last is thrown
  private @Nullable NoTargetAvailableException noTarget;
  private int attempts;
  private int rounds; // backoff rounds over every target
  private boolean backoffDue; // set by nextPick when every target was tried: wait, then pickAfterBackoff
  private @Nullable String retryReason; // why the next attempt is made (fairway.retries' reason)
  private long pickStartNanos; // when the latest pick began, by the meters' clock: a no_target timing starts here

  // The caller's cancel (sendAsync) or interrupt (send) and what it must stop; see cancel().
  private volatile boolean cancelled;
  private volatile @Nullable Attempt current;
  private volatile @Nullable CompletableFuture<?> currentFuture;
  private volatile @Nullable HedgeRace<T> race; // the first attempt's race, when it was hedgeable

  BalancedExchange(FairwayHttpClient client, ServiceRoute route, HttpRequest request, BodyHandler<T> handler,
      @Nullable PushPromiseHandler<T> pushPromiseHandler) {
    this.client = client;
    this.route = route;
    this.request = request;
    this.handler = handler;
    this.pushPromiseHandler = pushPromiseHandler;
    Boolean mark = MarkedRequest.of(request);
    this.resendable = RetryRule.isResendable(request.method(), mark, true);
    this.hedgeable = route.hedging != null && RetryRule.isHedgeable(request.method(), mark, true);
    this.affinityKey = client.affinityKey == null ? null : client.affinityKey.apply(request);
  }

  /** True if the service hedges and this request may be hedged (idempotent by its method or mark). */
  boolean hedgeable() {
    return hedgeable;
  }

  boolean isCancelled() {
    return cancelled;
  }

  /** True if a response with {@code status} to attempt {@code number} is kept for a retry, not handed on. */
  boolean retriesStatus(int status, int number) {
    return client.retries.onResponse(status, resendable, number) != null;
  }

  // ---- the synchronous driver

  HttpResponse<T> send() throws IOException, InterruptedException {
    if (Thread.interrupted()) { // the JDK's send would throw too (clearing the flag, as here): take no slot
      throw new InterruptedException("interrupted before the call began");
    }
    if (hedgeable) {
      return sendHedgeable();
    }
    route.callStarted(false);
    for (;;) {
      Pick pick = nextPick();
      if (pick == null && backoffDue) {
        client.sleeper.sleep(client.retries.backoffMillis(++rounds));
        pick = pickAfterBackoff();
      }
      if (pick == null) {
        return giveUpNow();
      }
      Attempt attempt = new Attempt(pick, this, ++attempts);
      HttpResponse<T> response;
      try {
        response = client.delegate.send(routed(attempt), new AttemptHandler<>(handler, attempt, this));
      } catch (InterruptedException e) {
        cancelled = true; // the JDK's send cancelled the exchange; whatever completes the attempt now releases it
        attempt.cancel();
        throw e;
      } catch (IOException e) {
        if (!failed(attempt, e)) {
          throw lastFailure();
        }
        continue;
      } catch (RuntimeException | Error e) {
        attempt.release(); // a bug or a rejected request, not the target's fault
        throw e;
      }
      if (answered(attempt, response)) {
        return response;
      }
    }
  }

  /**
   * {@link #send} of a hedgeable request: the race runs on the async path and this thread waits for
   * it. An interrupt cancels the call (both copies, each released, none charged) and is thrown.
   */
  private HttpResponse<T> sendHedgeable() throws IOException, InterruptedException {
    CompletableFuture<HttpResponse<T>> future = sendAsync();
    try {
      return future.get();
    } catch (InterruptedException e) {
      future.cancel(true);
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = unwrap(e);
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw new IOException(cause);
    }
  }

  // ---- the asynchronous driver

  @SuppressWarnings("FutureReturnValueIgnored") // the dependent stage only reacts; result carries every outcome
  CompletableFuture<HttpResponse<T>> sendAsync() {
    CompletableFuture<HttpResponse<T>> result = new CompletableFuture<>();
    result.whenComplete((r, e) -> {
      if (e instanceof CancellationException) {
        cancel();
      }
    });
    route.callStarted(hedgeable);
    next(result);
    return result;
  }

  /** Makes the next attempt, or settles {@code result} when none can be made. */
  private void next(CompletableFuture<HttpResponse<T>> result) {
    if (cancelled) {
      return;
    }
    Pick pick;
    try {
      pick = nextPick();
    } catch (IOException e) {
      result.completeExceptionally(e);
      return;
    }
    if (pick == null && backoffDue) {
      client.sleeper.after(client.retries.backoffMillis(++rounds), DIRECT).execute(() -> {
        if (!cancelled) {
          sendAttempt(pickAfterBackoff(), result);
        }
      });
      return;
    }
    sendAttempt(pick, result);
  }

  @SuppressWarnings("FutureReturnValueIgnored") // the dependent stage settles result, which the caller holds
  private void sendAttempt(@Nullable Pick pick, CompletableFuture<HttpResponse<T>> result) {
    if (pick == null) {
      giveUp(result);
      return;
    }
    Attempt attempt = new Attempt(pick, this, ++attempts);
    ServiceHedging hedging = route.hedging;
    if (hedgeable && attempts == 1 && hedging != null) {
      hedging.maintain(attempt.target(), attempt.sentNanos());
      long delay = hedging.delayNanos(attempt.target());
      if (delay >= 0) { // else no delay known yet: sent alone, and a percentile delay learns from its time
        HedgeRace<T> r = new HedgeRace<>(this, hedging, attempt, handler, result);
        race = r;
        r.start(delay);
        if (cancelled) { // the caller cancelled while the race began: cancel() may have missed it
          r.cancelAll();
        }
        return;
      }
    }
    current = attempt;
    CompletableFuture<HttpResponse<T>> sent;
    try {
      HttpRequest routed = routed(attempt);
      AttemptHandler<T> attemptHandler = new AttemptHandler<>(handler, attempt, this);
      sent = pushPromiseHandler == null
          ? client.delegate.sendAsync(routed, attemptHandler)
          : client.delegate.sendAsync(routed, attemptHandler, pushPromiseHandler);
    } catch (IOException e) { // an unaddressable target
      if (failed(attempt, e)) {
        next(result);
      } else {
        result.completeExceptionally(lastFailure());
      }
      return;
    } catch (RuntimeException | Error e) {
      attempt.release();
      result.completeExceptionally(e);
      return;
    }
    currentFuture = sent;
    if (cancelled) { // the caller cancelled while this attempt was being made: cancel() may have missed it
      sent.cancel(true);
      attempt.cancel();
      return;
    }
    sent.whenComplete((response, thrown) -> attemptEnded(attempt, response, thrown, result));
  }

  /**
   * {@code attempt}'s exchange ended, with {@code response} or {@code thrown}: hands the response on,
   * makes the next attempt, or settles {@code result} with the call's failure.
   */
  void attemptEnded(Attempt attempt, @Nullable HttpResponse<T> response, @Nullable Throwable thrown,
      CompletableFuture<HttpResponse<T>> result) {
    if (thrown != null || response == null) {
      Throwable cause = thrown == null ? new IOException("no response") : unwrap(thrown);
      if (cancelled) {
        attempt.cancel();
        result.completeExceptionally(cause);
      } else if (!(cause instanceof IOException io)) {
        attempt.release(); // a bug or the caller's handler, not the target's fault
        result.completeExceptionally(cause);
      } else if (failed(attempt, io)) {
        next(result);
      } else {
        result.completeExceptionally(lastFailure());
      }
    } else if (answered(attempt, response)) {
      result.complete(response);
    } else if (retryReason != null) {
      next(result);
    } else { // a failure status kept by a hedge race that no retry follows: the caller gets it
      giveUp(result);
    }
  }

  /** The request of a race's leg, sent through the delegate with the leg's body handler. */
  CompletableFuture<HttpResponse<T>> sendLeg(Attempt attempt, BodyHandler<T> legHandler) throws IOException {
    HttpRequest routed = routed(attempt);
    return pushPromiseHandler == null
        ? client.delegate.sendAsync(routed, legHandler)
        : client.delegate.sendAsync(routed, legHandler, pushPromiseHandler);
  }

  /** The attempt of a race's hedge, on {@code pick}: this call's second. */
  Attempt hedgeAttempt(Pick pick) {
    return new Attempt(pick, this, 2);
  }

  /**
   * The first attempt's race was decided; {@code hedge} is the hedge's target if one was sent: it
   * counts as an attempt on a target this call tried.
   */
  void raceEnded(@Nullable Target hedge) {
    if (hedge != null) {
      attempts++;
      tried = tried(hedge);
    }
  }

  /** The caller cancelled {@code sendAsync}'s future: the attempt in flight is cancelled and released. */
  private void cancel() {
    cancelled = true;
    HedgeRace<T> r = race;
    if (r != null) {
      r.cancelAll();
    }
    CompletableFuture<?> f = currentFuture;
    if (f != null) {
      f.cancel(true); // the JDK aborts the exchange (see FairwayHttpClient on cancellation)
    }
    Attempt a = current;
    if (a != null) {
      a.cancel();
    }
  }

  @SuppressWarnings("FutureReturnValueIgnored") // the dependent stage settles result, which the caller holds
  private void giveUp(CompletableFuture<HttpResponse<T>> result) {
    HttpResponse<T> kept = previous;
    byte[] body = previousBody;
    if (kept != null && body != null) {
      previous = null;
      ReplayedResponse.replay(kept, body, handler).whenComplete((r, e) -> {
        if (e != null) {
          result.completeExceptionally(unwrap(e));
        } else {
          result.complete(r);
        }
      });
      return;
    }
    result.completeExceptionally(noResponse());
  }

  // ---- the decisions both drivers share

  /** The next attempt's pick, or null when none may be made ({@link #backoffDue} says whether to wait first). */
  private @Nullable Pick nextPick() throws IOException {
    backoffDue = false;
    if (attempts > 0 && !route.budget.tryWithdraw()) {
      route.meters.budgetExhausted();
      return null;
    }
    pickStartNanos = route.meters.startNanos();
    try {
      return picked(route.loadBalancer.pick(affinityKey, tried));
    } catch (NoTargetAvailableException e) {
      noTarget = e;
    }
    // Ejected, closed, at capacity: waiting would not bring back an untried target.
    backoffDue = tried != null && RetryRule.everyTargetTried(route.loadBalancer.status(), tried);
    if (!backoffDue) {
      route.meters.noTarget(pickStartNanos);
    }
    return null;
  }

  /** {@code pick}, counted as a retry (by its reason) when it is not the call's first. */
  private Pick picked(Pick pick) {
    if (attempts > 0 && retryReason != null) { // set whenever a retry was decided
      route.meters.retry(retryReason);
    }
    return pick;
  }

  /** A pick among every target again, after the backoff of a call that tried them all; null if none. */
  private @Nullable Pick pickAfterBackoff() {
    if (tried != null) {
      tried.clear();
    }
    try {
      Pick pick = route.loadBalancer.pick(affinityKey, null);
      noTarget = null;
      return picked(pick);
    } catch (NoTargetAvailableException e) {
      noTarget = e;
      route.meters.noTarget(pickStartNanos); // timed with the backoff, as lb-okhttp's
      return null;
    }
  }

  /** The request for the attempt's target; one OkHttp-style connect failure if it has no usable address. */
  private HttpRequest routed(Attempt attempt) throws ConnectException {
    try {
      return RoutedRequest.to(request, attempt.target(), route.uris);
    } catch (URISyntaxException | IllegalArgumentException e) {
      ConnectException unaddressable = new ConnectException(
          "target " + attempt.target().id() + " of " + route.host + " has an address a URI cannot hold: " + e.getMessage());
      unaddressable.initCause(e);
      throw unaddressable;
    }
  }

  /**
   * Attempt failed with {@code e}: completes it (released for the caller's reasons: a cancel, an
   * interrupt, the request's own timeout) and records {@code e}. True to make another attempt:
   * never after a cancel or an interrupt.
   */
  private boolean failed(Attempt attempt, IOException e) {
    attempt.complete(e);
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(e);
    if (cancelled || Failures.isInterruption(e)) {
      return false; // the caller stopped waiting
    }
    // The request's own timeout is retried like any failure after a possible send: a resendable
    // request goes to another target with the same timeout (the JDK has no read timeout, so this
    // is how a target that never answers is left for another).

    retryReason = client.retries.onIOException(e, resendable, attempts);
    if (retryReason == null) {
      return false;
    }
    tried = tried(attempt.target());
    return true;
  }

  /**
   * A response came: true to hand it on (its body completes the attempt), false if it was kept for
   * a retry (then the attempt is complete, as a failure of its status).
   */
  private boolean answered(Attempt attempt, HttpResponse<T> response) {
    byte[] retained = attempt.retainedBody;
    if (retained == null) {
      return true;
    }
    attempt.complete(null); // reports the failure status now, before the next pick
    retryReason = client.retries.onResponse(response.statusCode(), resendable, attempts);
    previous = response;
    previousBody = retained;
    tried = tried(attempt.target());
    return false;
  }

  /** {@link #send}'s end without a response to hand on: the replayed kept response, or the failure. */
  private HttpResponse<T> giveUpNow() throws IOException, InterruptedException {
    HttpResponse<T> kept = previous;
    byte[] body = previousBody;
    if (kept != null && body != null) {
      try {
        return ReplayedResponse.replay(kept, body, handler).toCompletableFuture().get();
      } catch (ExecutionException e) {
        Throwable cause = unwrap(e);
        if (cause instanceof IOException io) {
          throw io;
        }
        throw new IOException("the body handler failed on a replayed response", cause);
      }
    }
    throw noResponse();
  }

  private IOException noResponse() {
    if (failures == null) {
      return noTarget != null ? noTarget : new IOException("retry budget of " + route.host + " exhausted");
    }
    IOException last = lastFailure();
    if (noTarget != null) {
      last.addSuppressed(noTarget);
    }
    return last;
  }

  /** The latest failure, carrying the earlier ones as suppressed exceptions (as the JDK's own retries do not). */
  private IOException lastFailure() {
    List<IOException> all = failures;
    if (all == null) {
      return new IOException("no attempt failed"); // unreachable: called after a failure only
    }
    IOException last = all.get(all.size() - 1);
    for (int i = 0; i < all.size() - 1; i++) {
      if (all.get(i) != last) {
        last.addSuppressed(all.get(i));
      }
    }
    return last;
  }

  private Set<Target> tried(Target target) {
    Set<Target> set = tried != null ? tried : new HashSet<>(8);
    set.add(target);
    return set;
  }

  static Throwable unwrap(Throwable t) {
    Throwable cause = t;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
