package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecRuntime;
import org.apache.hc.client5.http.impl.classic.RequestFailedException;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ConnectionClosedException;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.ProtocolVersion;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.net.URIAuthority;
import org.jspecify.annotations.Nullable;

/**
 * One balanced exchange: picks a target, sends the request there, and when lb-core's {@link
 * RetryRule} says so, picks another target this exchange has not tried. Owns the exchange's state
 * (tried targets, the response kept from a retryable status, earlier failures, attempts); each
 * attempt's pick lives in its own {@link Attempt}, completed before the next attempt picks, so
 * passive health has heard of attempt N when attempt N+1 chooses. Used by one thread, once.
 *
 * <p>Every attempt passes a new {@link ExecChain.Scope} down the chain: the same exchange id,
 * runtime and context, and the picked target's route (made once per target and planned route by
 * {@link TargetRoutes}), which {@code CONNECT} opens. The runtime is shared, as HttpClient's own
 * retry and redirect elements share it: an attempt that failed has discarded its connection, and a
 * retried response is closed (releasing its connection) before the next attempt leases one for its
 * own route.
 *
 * <p>The request is not copied per attempt. HttpClient hands this element a copy of the caller's
 * request that only this exchange holds ({@code InternalHttpClient} copies it before the chain),
 * so an attempt sends that request aimed at its target: its authority set to the target's (so
 * {@code Host} names it). The elements below add headers to what they get, and may wrap the
 * entity; a further attempt first puts the headers and entity back as they came. When the exchange
 * ends, the request's own authority is restored, because {@code REDIRECT} above resolves a
 * relative location against the request it passed down: against the logical host, so a redirect
 * is balanced anew.
 *
 * <p>A hedgeable request's first attempt on a service that hedges runs as a {@link
 * ClassicHedgeRace} instead (when a delay is known): each copy on a runtime forked from this
 * exchange's, the first on this (the caller's) thread; the race hands back the outcome of one copy,
 * which this loop then treats as any attempt's. Both copies' targets count as tried. Retries after
 * the race use the exchange's runtime, unused during the race. The two copies are in flight at
 * once, so they never share a request: the first is the exchange's own request aimed in place, as
 * any attempt that runs alone; the hedge gets a request of its own, built from the request as it
 * came (its method, scheme, path, version, headers and entity, saved when the exchange began: never
 * what the first copy's chain made of it) with the hedge target's authority ({@link #sendCopy}).
 */
final class BalancedExchange implements BooleanSupplier {
  /**
   * Pooled connections found closed by the server ({@link IdleConnectionCheck}) that one send skips
   * before it gives up: each is discarded, so the pool soon opens a new connection; a bound all the same.
   */
  static final int MAX_STALE_CONNECTIONS = 100;

  private final ClassicHttpRequest request;
  private final ExecChain.Scope scope;
  private final ExecChain chain;
  private final ServiceRoute route;
  private final BalancingExecHandler handler;
  private final boolean resendable;
  private final @Nullable URIAuthority logicalAuthority; // the request's own, restored when the exchange ends
  // The request as it came, saved before any attempt: a further attempt puts headers and entity back,
  // and a hedge builds its own request from all of it (the request itself may be down the chain then).
  private final String method;
  private final @Nullable String scheme;
  private final @Nullable String path;
  private final @Nullable ProtocolVersion version;
  private final Header[] headers; // a copy (getHeaders makes one); Header objects are immutable
  private final @Nullable HttpEntity requestEntity;
  private final @Nullable String affinityKey; // the request's, read once: every pick of this exchange uses it
  private final boolean hedgeable; // the service hedges, and this request may have a second copy in flight
  private boolean learning; // an unraced hedgeable first attempt: a usable response's time teaches the delay
  private boolean aimed; // the request went down the chain once already (caller's thread only)

  private @Nullable Set<Target> tried; // allocated on the first retry only
  private @Nullable ClassicHttpResponse previous; // a retryable-status response, returned if no further attempt is made
  private @Nullable List<IOException> failures; // every attempt's failure, oldest first; the last is thrown
  private @Nullable NoTargetAvailableException noTarget;
  private @Nullable String retryReason; // why the next attempt is made (fairway.retries' reason)
  private int attempts;
  private int rounds; // backoff rounds over every target

  BalancedExchange(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain, ServiceRoute route,
      BalancingExecHandler handler) {
    this.request = request;
    this.scope = scope;
    this.chain = chain;
    this.route = route;
    this.handler = handler;
    this.logicalAuthority = request.getAuthority();
    this.method = request.getMethod();
    this.scheme = request.getScheme();
    this.path = request.getPath();
    this.version = request.getVersion();
    this.headers = request.getHeaders();
    this.affinityKey = handler.affinityKeyOf(request);
    this.requestEntity = request.getEntity();
    // HttpClient requests carry no idempotency mark: the method decides.
    this.resendable = RetryRule.isResendable(method, null, requestEntity == null || requestEntity.isRepeatable());
    this.hedgeable = route.hedging != null && isHedgeable(method, requestEntity);
  }

  /**
   * True if a second copy of a request may be in flight beside the first: the async client's rule
   * ({@link AsyncBalancedExchange#isHedgeable}: GET, HEAD, OPTIONS without an entity; one entity
   * cannot feed two exchanges at once).
   */
  static boolean isHedgeable(String method, @Nullable HttpEntity entity) {
    return entity == null && AsyncBalancedExchange.isHedgeable(method, null);
  }

  ClassicHttpResponse proceed() throws IOException {
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedIOException("interrupted"); // take no slot at all
    }
    if (scope.execRuntime.isExecutionAborted()) {
      throw new RequestFailedException("Request aborted");
    }
    route.callStarted(hedgeable);
    try {
      for (;;) {
        if (attempts > 0) {
          stopIfCallerGone(null); // no further attempt for a caller that stopped waiting
        }
        Pick pick = nextPick();
        if (pick == null) {
          return giveUp();
        }
        ClassicHttpResponse response = attempts == 0 && hedgeable ? first(pick) : attempt(newAttempt(pick));
        if (response != null) {
          return response;
        }
      }
    } finally {
      closePrevious(); // set here only if the caller does not get it: a later step threw
      // Every copy sent in place has ended by now (a race returns after its first copy's send did).
      request.setAuthority(logicalAuthority); // for REDIRECT above, which resolves a location against it
    }
  }

  /** The caller aborted the request ({@code cancel()}); one object less per exchange than a method reference. */
  @Override
  public boolean getAsBoolean() {
    return scope.execRuntime.isExecutionAborted();
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
   * A pick among the targets not tried yet; when there are none left because this exchange tried
   * them all, a new round over all of them after the backoff. Null if no target can be had.
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
    handler.sleeper.sleep(handler.retries.backoffMillis(++rounds), scope.execRuntime);
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

  /** A new attempt of this exchange on {@code pick}'s target: counted now. */
  Attempt newAttempt(Pick pick) {
    attempts++;
    return new Attempt(pick, route, this);
  }

  /**
   * The first attempt of a hedgeable request: raced against a hedge ({@link ClassicHedgeRace}) when
   * the service knows a delay, else sent alone, its time teaching the delay.
   */
  private @Nullable ClassicHttpResponse first(Pick pick) throws IOException {
    ServiceHedging hedging = route.hedging;
    if (hedging == null) {
      return attempt(newAttempt(pick));
    }
    hedging.maintain(pick.target(), hedging.nowNanos());
    long delay = hedging.delayNanos(pick.target());
    if (delay < 0) {
      learning = true; // no delay known yet: sent alone, and a percentile delay learns from its time
      return attempt(newAttempt(pick));
    }
    ClassicHedgeRace.Outcome outcome = new ClassicHedgeRace(this, hedging, newAttempt(pick)).run(delay);
    if (outcome.earlier() != null) {
      failures(outcome.earlier());
    }
    return outcome(outcome.attempt(), outcome.response(), outcome.failure());
  }

  /** The response to return, or null if a retry was decided (then the attempt is complete). */
  private @Nullable ClassicHttpResponse attempt(Attempt attempt) throws IOException {
    closePrevious(); // its attempt is complete; its connection goes back before this attempt leases one
    ClassicHttpResponse response = null;
    IOException failure = null;
    try {
      response = send(attempt, scope.execRuntime, scope.clientContext);
    } catch (IOException e) {
      failure = e;
    } catch (HttpException e) {
      failure = new ClientProtocolException(e.getMessage(), e); // what HttpClient itself throws for it
    } catch (RuntimeException | Error e) {
      attempt.release(); // a bug below, not the target's fault
      throw e;
    }
    return outcome(attempt, response, failure);
  }

  /**
   * Sends the exchange's own request, aimed at {@code attempt}'s target ({@link #aimAt}), down the
   * chain with {@code runtime} and {@code context}; blocks until its response headers come. For an
   * attempt that runs alone, or the first copy of a race: only ever on the caller's thread, one at
   * a time.
   */
  ClassicHttpResponse send(Attempt attempt, ExecRuntime runtime, HttpClientContext context)
      throws IOException, HttpException {
    TargetRoutes.Entry to = route.targets.of(attempt.target());
    for (int stale = 0; ; stale++) {
      try {
        return chain.proceed(aimAt(to), scopeFor(to, runtime, context));
      } catch (IdleConnectionCheck.StaleConnectionException e) {
        if (stale >= MAX_STALE_CONNECTIONS) {
          throw e;
        }
        // Not sent: the connection was discarded below, and the pool gives the next one (or a new one).
      }
    }
  }

  /**
   * Sends a request of its own for {@code attempt} (a race's hedge, in flight beside the first copy,
   * which holds the exchange's request): built from the request as it came, aimed at the hedge's
   * target; blocks until its response headers come.
   */
  ClassicHttpResponse sendCopy(Attempt attempt, ExecRuntime runtime, HttpClientContext context)
      throws IOException, HttpException {
    TargetRoutes.Entry to = route.targets.of(attempt.target());
    for (int stale = 0; ; stale++) {
      try {
        return chain.proceed(copyFor(to), scopeFor(to, runtime, context));
      } catch (IdleConnectionCheck.StaleConnectionException e) {
        if (stale >= MAX_STALE_CONNECTIONS) {
          throw e;
        }
      }
    }
  }

  /**
   * What the attempt's outcome (its response's headers, or its failure) makes of the exchange: the
   * response to return, or null if a retry was decided (then the attempt is complete), or thrown.
   */
  private @Nullable ClassicHttpResponse outcome(Attempt attempt, @Nullable ClassicHttpResponse result,
      @Nullable IOException failed) throws IOException {
    IOException failure = failed;
    ClassicHttpResponse response = result;
    if (response != null) {
      try {
        attempt.responded(response.getCode(), headerValue(response, LoadReportHeader.NAME));
        ServiceHedging hedging = route.hedging;
        if (learning && attempts == 1 && hedging != null && !route.outcomes.isFailureStatus(response.getCode())) {
          hedging.recordResponse(attempt.target(), attempt.sentNanos());
        }
        if (resendable && attempts < handler.retries.maxAttempts()) {
          readSmallEntity(response);
        }
      } catch (IOException e) {
        failure = e;
      } catch (RuntimeException | Error e) {
        attempt.release(); // a bug, not the target's fault
        throw e;
      }
    }
    if (failure != null) {
      stopIfCallerGone(attempt, failure);
      if (failure instanceof ConnectionRequestTimeoutException) {
        attempt.release(); // the client's own pool had no connection in time: not the target's doing
        retryReason = null;
      } else {
        attempt.complete(failure);
        retryReason = handler.retries.onIOException(failure, resendable, attempts);
      }
      return failed(attempt.target(), failure, retryReason);
    }
    if (response == null) {
      throw new IllegalStateException("neither a response nor a failure");
    }
    retryReason = handler.retries.onResponse(response.getCode(), resendable, attempts);
    if (retryReason == null) {
      return track(response, attempt);
    }
    attempt.complete(null); // reports the failure status now, before the next pick
    previous = response;
    tried = tried(attempt.target());
    return null;
  }

  /**
   * Throws if the caller stopped waiting: the request was aborted ({@code cancel()}) or the thread
   * interrupted (its flag set, or {@code failure} says so). The attempt, if any, is released, never
   * a failure of its target.
   */
  private void stopIfCallerGone(@Nullable Attempt attempt, @Nullable IOException failure) throws IOException {
    boolean abortedNow = getAsBoolean();
    boolean interrupted = Thread.currentThread().isInterrupted() || Failures.isInterruption(failure);
    if (!abortedNow && !interrupted) {
      return;
    }
    if (attempt != null) {
      attempt.cancel();
    }
    if (abortedNow) {
      throw failure != null ? failure : new RequestFailedException("Request aborted");
    }
    Thread.currentThread().interrupt(); // kept for the caller (a lease wait clears it when it throws)
    if (failure instanceof InterruptedIOException e && Failures.isInterruption(e)) {
      throw e;
    }
    InterruptedIOException e = new InterruptedIOException("interrupted");
    if (failure != null) {
      e.initCause(failure);
    }
    throw e;
  }

  private void stopIfCallerGone(@Nullable IOException failure) throws IOException {
    stopIfCallerGone(null, failure);
  }

  /** Keeps {@code e} as an earlier failure of this exchange (a copy of a race that failed first). */
  private void failures(IOException e) {
    if (failures == null) {
      failures = new ArrayList<>(2);
    }
    failures.add(e);
  }

  /** A race sent a hedge: both copies' targets count as tried, so that a retry after the race goes elsewhere. */
  void hedgeSent(Target first, Target hedge) {
    tried = tried(first);
    tried = tried(hedge);
  }

  ExecChain.Scope scope() {
    return scope;
  }

  ServiceRoute route() {
    return route;
  }

  @Nullable String affinityKey() {
    return affinityKey;
  }

  /** True once the caller cancelled the request ({@code cancel()} on it). */
  boolean cancelled() {
    return getAsBoolean();
  }

  /** Records {@code e}; returns null to retry, or throws it with the earlier failures suppressed. */
  private @Nullable ClassicHttpResponse failed(Target target, IOException e, @Nullable String retryReason)
      throws IOException {
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
  private ClassicHttpResponse giveUp() throws IOException {
    stopIfCallerGone(noTarget); // say, interrupted while waiting for a slot (concurrency limited)
    if (previous != null) {
      ClassicHttpResponse last = previous;
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

  /** The latest failure, carrying the earlier ones as suppressed exceptions. */
  private static IOException lastFailure(List<IOException> failures) {
    IOException last = failures.get(failures.size() - 1);
    for (int i = 0; i < failures.size() - 1; i++) {
      last.addSuppressed(failures.get(i));
    }
    return last;
  }

  /**
   * Closes the response kept from a retried status, whose attempt is complete: its connection goes
   * back (or is closed). A failure to close it ends nothing: it must not keep the next attempt's
   * pick from being completed.
   */
  private void closePrevious() {
    ClassicHttpResponse kept = previous;
    previous = null;
    if (kept != null) {
      try {
        kept.close();
      } catch (IOException e) {
        // The connection is discarded either way; the exchange goes on.
      }
    }
  }

  private Set<Target> tried(Target target) {
    Set<Target> set = tried != null ? tried : new HashSet<>(8);
    set.add(target);
    return set;
  }

  /** The scope of an attempt on {@code to}'s target: this exchange's id, the target's route, the runtime and context given. */
  private ExecChain.Scope scopeFor(TargetRoutes.Entry to, ExecRuntime runtime, HttpClientContext context)
      throws ConnectException {
    return new ExecChain.Scope(scope.exchangeId, to.route(scope.route), scope.originalRequest, runtime, context);
  }

  /**
   * The exchange's request aimed at {@code to}'s target: its authority the target's (so the {@code
   * Host} header names the target). If it went down the chain before, its headers and entity are
   * first put back as they came: the elements below added theirs (a {@code Host} naming the
   * previous target among them) and may have wrapped the entity.
   */
  private ClassicHttpRequest aimAt(TargetRoutes.Entry to) {
    if (aimed) {
      request.setHeaders(headers);
      request.setEntity(requestEntity);
    }
    aimed = true;
    request.setAuthority(to.authority);
    return request;
  }

  /**
   * A new request for {@code to}'s target, from the request as it came (saved when the exchange
   * began): never the exchange's request, which the first copy of a race has down the chain at the
   * same time, with the headers its chain added.
   */
  private ClassicHttpRequest copyFor(TargetRoutes.Entry to) {
    BasicClassicHttpRequest copy = new BasicClassicHttpRequest(method, scheme, to.authority, path);
    copy.setVersion(version);
    copy.setHeaders(headers); // copied into the new request's own list
    copy.setEntity(requestEntity); // null: a hedged request has none
    return copy;
  }

  private static @Nullable String headerValue(ClassicHttpResponse response, String name) {
    Header header = response.getFirstHeader(name);
    return header == null ? null : header.getValue();
  }

  /**
   * Reads an entity with a known length of at most {@code bufferBodiesUpTo} into memory now (its
   * connection goes back to the pool), so a connection lost mid-body fails this attempt, which may
   * then be retried, instead of failing the caller's read later.
   */
  private void readSmallEntity(ClassicHttpResponse response) throws IOException {
    HttpEntity entity = response.getEntity();
    if (handler.bufferBodiesUpTo == 0 || entity == null || !entity.isStreaming()) {
      return;
    }
    long length = entity.getContentLength();
    if (length > 0 && length <= handler.bufferBodiesUpTo) {
      byte[] content = new byte[(int) length]; // the declared length: no growing buffer, no copy
      try (InputStream in = entity.getContent()) {
        int read = in.readNBytes(content, 0, content.length);
        if (read < content.length) { // HttpClient's own stream throws this first; a stream that just ends cannot
          throw new ConnectionClosedException(
              "Premature end of Content-Length delimited message body (expected: %d; received: %d)", length, read);
        }
      } catch (IOException | RuntimeException e) {
        response.close();
        throw e;
      }
      response.setEntity(new ReadEntity(entity, content));
    }
  }

  /** Wraps the entity so the attempt completes when it is consumed or closed; completes at once if there is none to wait for. */
  private static ClassicHttpResponse track(ClassicHttpResponse response, Attempt attempt) {
    HttpEntity entity = response.getEntity();
    if (entity == null || !entity.isStreaming()) {
      attempt.complete(null); // nothing left on the wire: HttpClient released the connection already
      return response;
    }
    response.setEntity(new TrackedEntity(entity, attempt));
    return response;
  }

  /** A response entity read whole: its bytes, with the original's content type, encoding and trailers. */
  private static final class ReadEntity extends HttpEntityWrapper {
    private final byte[] content;

    ReadEntity(HttpEntity original, byte[] content) {
      super(original);
      this.content = content;
    }

    @Override
    public boolean isRepeatable() {
      return true;
    }

    @Override
    public boolean isStreaming() {
      return false;
    }

    @Override
    public long getContentLength() {
      return content.length;
    }

    @Override
    public InputStream getContent() {
      return new ByteArrayInputStream(content);
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      out.write(content);
    }

    @Override
    public void close() {
      // The original was read to its end and closed.
    }
  }
}
