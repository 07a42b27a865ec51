package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.WatchSteps.firstLine;
import static dev.fairway.lb.consul.WatchSteps.parseLong;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.DiscoveryMetrics;
import dev.fairway.lb.internal.Targets;
import java.lang.System.Logger.Level;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The blocking-query loop of one service, as a state machine driven by a {@link Scheduler}: no thread
 * of its own. One step sends a query; its reply (or failure) decides the next step and how long to
 * wait before it. Every wait goes through the scheduler and every clock reading through the ticker,
 * so tests replay exact sequences of requests and waits on fake time.
 *
 * <p>The rules it follows (Consul's blocking-query documentation):
 *
 * <ul>
 *   <li>A good reply is mapped and handed to the {@link Sink}; the next query blocks on its
 *       {@code X-Consul-Index}: at once after a new list, held back after the same list under a new
 *       index or while changes churn too fast (the {@link WakeupLimiter} decides, and says why).
 *   <li>Any failure (transport error, status other than 200, a missing, zero or non-numeric index, a
 *       body that is not a JSON array) keeps the last list, is counted with a reason, and waits a
 *       {@link Backoff} delay; the next query is a fresh, non-blocking read (index 0).
 *   <li>An index that went backwards: the reply is used, then the watch restarts from index 0 after a
 *       backoff delay.
 *   <li>{@code 200 []} with {@code X-Consul-Results-Filtered-By-ACLs: true}: the token may not read
 *       the service. The last good list stays, one warning says what to fix, each such reply is
 *       counted as {@code acl_filtered}; the watch keeps blocking on the reply's index.
 *   <li>With a {@code maxStale} policy, a stale reply whose {@code X-Consul-LastContact} exceeds it is
 *       not used; the query is repeated at once without {@code stale}, so the leader answers.
 *   <li>Nothing escapes a step: an unexpected exception is logged, counted as {@code unexpected} and
 *       backed off like any other error.
 * </ul>
 *
 * <p>Thread-safety: every step runs on the scheduler, one at a time (the production scheduler has one
 * thread; the completion of a query hops back onto it). {@link #close()} may be called from any thread.
 */
final class HealthWatch {
  private static final System.Logger LOG = System.getLogger(ConsulTargetSource.class.getName());
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Receives every good list (the source compares and publishes) and each target's node name, by id. */
  interface Sink {
    void accept(List<Target> targets, Map<String, String> nodes);
  }

  private final HealthQuery query;
  private final LongSupplier ticker;
  private final HealthMapper mapper;
  private final WakeupLimiter limiter;
  private final Backoff backoff;
  private final DiscoveryMetrics metrics;
  private final Sink sink;

  private final WatchSteps steps;
  private volatile long lastSuccessNanos;

  // Loop state: touched only by steps, which never run concurrently.
  private long index; // unsigned, as Consul's uint64; 0 = not blocking
  private boolean consistentOnce;
  private Set<String> lastSkipKeys = Set.of();
  private @Nullable String lastErrorReason;
  private int errorsSinceSuccess;
  private boolean leaderUnknown;
  private boolean aclWarned;
  private int targetCount;
  private @Nullable List<Target> lastList; // null until the first good list
  private long sentNanos;

  HealthWatch(HealthQuery query, ConsulHttp http, WatchSteps.Scheduler scheduler, LongSupplier ticker,
      HealthMapper mapper, WakeupLimiter limiter, Backoff backoff, DiscoveryMetrics metrics, Sink sink) {
    this.query = query;
    this.ticker = ticker;
    this.mapper = mapper;
    this.limiter = limiter;
    this.backoff = backoff;
    this.metrics = metrics;
    this.sink = sink;
    this.steps = new WatchSteps(http, scheduler, this::unexpected);
    this.lastSuccessNanos = ticker.getAsLong();
  }

  void start() {
    steps.execute(this::send);
  }

  /** Stops the loop: drops the waiting step and cancels the query in flight. Idempotent, any thread. */
  void close() {
    steps.close();
  }

  double stalenessSeconds() {
    return (ticker.getAsLong() - lastSuccessNanos) / 1e9;
  }

  // ---------------------------------------------------------------------------------------------
  // Steps

  private void send() {
    sentNanos = ticker.getAsLong();
    steps.send(query.pathAndQuery(index, consistentOnce), query.timeout(), this::onReply, this::fail);
  }

  /** Sends the next query after what the limiter decides for a reply that did or did not change the list. */
  private void next(boolean changed) {
    long wait = limiter.afterReply(changed, sentNanos);
    switch (limiter.verdict()) {
      case STARTS_POLLING -> LOG.log(Level.WARNING, "{0}: the instance list changes faster than {1} times at once"
              + " and then {2} a second (a flapping check?); one query per {3} ms until it is quiet",
          query.service(), WakeupLimiter.CHANGE_BURST, 1_000 / WakeupLimiter.CHANGE_REFILL.toMillis(),
          WakeupLimiter.FLAP_POLL.toMillis());
      case ENDS_POLLING -> LOG.log(Level.INFO, "{0}: the instance list is quiet again; blocking queries again",
          query.service());
      default -> { }
    }
    if (limiter.polling()) {
      metrics.throttled("flapping");
    } else if (wait > 0) {
      metrics.throttled("unchanged");
    }
    if (wait > 0) {
      steps.schedule(this::send, wait);
    } else {
      send();
    }
  }

  private void onReply(ConsulHttp.Reply reply) {
    if (reply.status() != 200) {
      fail("http_" + reply.status(), firstLine(reply.body()));
      return;
    }
    // The body first: a proxy's HTML page is "malformed", whatever headers it lacks.
    JsonNode body;
    try {
      body = reply.body() == null ? null : JSON.readTree(reply.body());
    } catch (JsonProcessingException e) {
      fail("malformed", firstLine(e.getOriginalMessage()));
      return;
    }
    if (body != null && body.isNull()) {
      fail("null_body", "the reply body was null");
      return;
    }
    if (body == null || !body.isArray()) {
      fail("malformed", "the reply is not a JSON array");
      return;
    }
    long next = WatchSteps.blockingIndex(reply, this::fail);
    if (next == 0) {
      return;
    }
    if (tooStale(reply)) {
      return;
    }
    boolean backwards = Long.compareUnsigned(next, index) < 0;
    boolean filtered = "true".equalsIgnoreCase(reply.header("X-Consul-Results-Filtered-By-ACLs"));
    boolean changed = false;
    if (filtered && body.isEmpty()) {
      aclFiltered();
    } else {
      if (filtered && !aclWarned) {
        LOG.log(Level.WARNING, "{0}: Consul left out some entries the ACL token may not read (node:read?)",
            query.service());
        aclWarned = true;
      } else if (!filtered) {
        aclWarned = false;
      }
      changed = accept(body, ageNanos(reply));
    }
    checkLeader(reply);
    if (errorsSinceSuccess > 0) {
      LOG.log(Level.INFO, "{0}: Consul answers again after {1} failed attempt(s)", query.service(),
          errorsSinceSuccess);
    }
    errorsSinceSuccess = 0;
    lastErrorReason = null;
    if (backwards) {
      LOG.log(Level.INFO, "{0}: X-Consul-Index went backwards ({1} -> {2}); watching from 0 again",
          query.service(), Long.toUnsignedString(index), Long.toUnsignedString(next));
      index = 0;
      metrics.error("index_backwards");
      steps.schedule(this::send, backoff.nextDelayNanos());
      return;
    }
    index = next;
    backoff.reset();
    next(changed);
  }

  /** A stale reply beyond {@code maxStale}: asks the leader once instead. True if the reply is not used. */
  private boolean tooStale(ConsulHttp.Reply reply) {
    if (query.maxStale() == null || consistentOnce) {
      consistentOnce = false;
      return false;
    }
    long lastContactMs = parseLong(reply.header("X-Consul-Lastcontact"), 0);
    if (lastContactMs <= query.maxStale().toMillis()) {
      return false;
    }
    LOG.log(Level.DEBUG, "{0}: a stale reply {1} ms behind the leader (max {2} ms); asking the leader",
        query.service(), lastContactMs, query.maxStale().toMillis());
    metrics.error("too_stale");
    consistentOnce = true;
    next(false);
    return true;
  }

  private void aclFiltered() {
    metrics.error("acl_filtered");
    if (!aclWarned) {
      LOG.log(Level.WARNING, "{0}: Consul filtered every entry by ACL (X-Consul-Results-Filtered-By-ACLs):"
              + " the token lacks service:read on {0}; keeping the last {1} target(s)",
          query.service(), targetCount);
      aclWarned = true;
    }
  }

  /**
   * Maps and hands on one good reply; {@code ageNanos} is how old the agent cache says it is. True if
   * its list differs from the last one (ids, addresses, weights, zones, health, metadata).
   */
  private boolean accept(JsonNode body, long ageNanos) {
    HealthMapper.Mapped mapped = mapper.map(body);
    reportSkips(mapped.skipped());
    lastSuccessNanos = ticker.getAsLong() - ageNanos;
    targetCount = mapped.targets().size();
    List<Target> previous = lastList;
    lastList = mapped.targets();
    sink.accept(mapped.targets(), mapped.nodes());
    return previous == null || !Targets.sameTargets(previous, mapped.targets());
  }

  private long ageNanos(ConsulHttp.Reply reply) {
    if (!query.cached()) {
      return 0;
    }
    // X-Cache: HIT|MISS and Age (seconds) come with ?cached; a hit may be older than the reply.
    return TimeUnit.SECONDS.toNanos(Math.max(0, parseLong(reply.header("Age"), 0)));
  }

  private void reportSkips(List<HealthMapper.Skip> skipped) {
    if (skipped.isEmpty() && lastSkipKeys.isEmpty()) {
      return;
    }
    Set<String> keys = new HashSet<>();
    for (HealthMapper.Skip s : skipped) {
      String key = s.key() + "/" + s.reason();
      keys.add(key);
      if (!lastSkipKeys.contains(key)) {
        // Logged and counted when an entry turns bad, not on every reply that still carries it.
        LOG.log(Level.WARNING, "{0}: skipped Consul entry {1} ({2}): {3}", query.service(), s.key(), s.reason(),
            s.detail());
        metrics.skipped(s.reason());
      }
    }
    lastSkipKeys = keys;
  }

  private void checkLeader(ConsulHttp.Reply reply) {
    boolean unknown = "false".equalsIgnoreCase(reply.header("X-Consul-Knownleader"));
    if (unknown && !leaderUnknown) {
      LOG.log(Level.WARNING, "{0}: Consul reports no known leader (last contact {1} ms ago); the list may be stale",
          query.service(), reply.header("X-Consul-Lastcontact"));
    } else if (!unknown && leaderUnknown) {
      LOG.log(Level.INFO, "{0}: Consul has a leader again", query.service());
    }
    leaderUnknown = unknown;
  }

  /** Counts and logs one failure, then waits the backoff before a fresh, non-blocking read. */
  private void fail(String reason, String detail) {
    index = 0;
    consistentOnce = false;
    errorsSinceSuccess++;
    long delay = backoff.nextDelayNanos();
    steps.schedule(this::send, delay);
    metrics.error(reason);
    Level level = reason.equals(lastErrorReason) ? Level.DEBUG : Level.WARNING;
    LOG.log(level, "{0}: Consul query failed ({1}: {2}); keeping {3} target(s), retrying in {4} ms",
        query.service(), reason, detail, targetCount, TimeUnit.NANOSECONDS.toMillis(delay));
    lastErrorReason = reason;
  }

  /** The last line of defence: whatever went wrong, the loop goes on after a backoff. */
  private void unexpected(Throwable t) {
    try {
      steps.cancel();
      index = 0;
      errorsSinceSuccess++;
      steps.schedule(this::send, backoff.nextDelayNanos());
      LOG.log(Level.ERROR, query.service() + ": unexpected failure in the Consul watch; backing off", t);
      metrics.error("unexpected");
    } catch (RuntimeException again) {
      LOG.log(Level.ERROR, query.service() + ": the Consul watch could not recover from a failure", again);
    }
  }

  @Override
  public String toString() {
    return "HealthWatch{" + query.service() + ", index=" + Long.toUnsignedString(index) + "}";
  }

}
