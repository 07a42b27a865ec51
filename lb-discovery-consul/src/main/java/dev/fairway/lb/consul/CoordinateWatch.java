package dev.fairway.lb.consul;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.System.Logger.Level;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The network-coordinate loop of one {@link ConsulDiscovery}, shared by every source that wants
 * closeness: first {@code GET /v1/agent/self} for the agent's node, then {@code GET
 * /v1/coordinate/nodes} as a blocking query, at most one every {@code minInterval}. Like
 * {@link HealthWatch} it is a state machine on the discovery's {@link WatchSteps.Scheduler}, with no
 * thread of its own, so tests replay its exact requests and waits on fake time.
 *
 * <p>Why so rarely: Consul's agents send their coordinates to the servers every 15 s or more and the
 * servers apply them in batches every 5 s, so in a live datacenter the index of this endpoint moves
 * every few seconds, while a coordinate itself drifts only slowly. A blocking query alone would turn
 * into a read every 5 s of a reply that lists every node; {@code minInterval} (default 60 s) holds it to
 * one read a minute, and the blocking query (default {@code wait} 5 minutes) keeps a quiet datacenter at
 * one read per 5 minutes. The read is {@code ?stale}: any server may answer, the leader is spared, and a
 * coordinate a few seconds old is as good an estimate as a fresh one.
 *
 * <p>The rules:
 *
 * <ul>
 *   <li>A good {@code /v1/coordinate/nodes} reply becomes a {@link NetworkCoordinates} handed to every
 *       listener; entries are read one by one and a bad one is logged (once, when it turns bad) and
 *       listed in {@link NetworkCoordinates#skipped()} for the sources to count.
 *   <li>Any failure of either request (transport, a status other than 200, a body that is not what it
 *       should be, a missing, zero or non-numeric {@code X-Consul-Index}) keeps the last reading, is
 *       reported to the listeners with a reason, and waits a {@link Backoff} delay; then the loop starts
 *       over with {@code /v1/agent/self} (the agent may have restarted under another name) and a fresh,
 *       non-blocking read.
 *   <li>An index that went backwards: the reply is used, the next read is a fresh one.
 *   <li>Nothing escapes a step: an unexpected exception is logged, reported as {@code unexpected} and
 *       backed off.
 * </ul>
 *
 * <p>Thread-safety: steps run one at a time on the scheduler; {@link #addListener}, {@link #removeListener}
 * and {@link #close()} may be called from any thread.
 */
final class CoordinateWatch {
  private static final System.Logger LOG = System.getLogger(ConsulDiscovery.class.getName());
  private static final ObjectMapper JSON = new ObjectMapper();
  static final Duration DEFAULT_MIN_INTERVAL = Duration.ofSeconds(60);
  static final Duration DEFAULT_WAIT = Duration.ofMinutes(5);
  /** A non-blocking read answers at once; this only bounds a stalled agent. */
  static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

  /** Hears every good reading and every failure; called on the scheduler, one call at a time. */
  interface Listener {
    void coordinates(NetworkCoordinates coordinates);

    /** A request failed; {@code reason} is a short fixed word ({@code http_403}, {@code connect}, ...). */
    void coordinateError(String reason);
  }

  private final Backoff backoff;
  private final long minIntervalNanos;
  private final Duration wait;
  private final String goWait;
  private final @Nullable String partition;
  private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();

  private final WatchSteps steps;
  private volatile @Nullable NetworkCoordinates current;

  // Loop state: touched only by steps, which never run concurrently.
  private @Nullable AgentSelf self;
  private long index;
  private @Nullable String lastErrorReason;
  private Set<String> lastSkipKeys = Set.of();
  private boolean aclWarned;

  CoordinateWatch(ConsulHttp http, WatchSteps.Scheduler scheduler, Backoff backoff, Duration minInterval,
      Duration wait, @Nullable String partition) {
    this.backoff = backoff;
    this.minIntervalNanos = minInterval.toNanos();
    this.wait = wait;
    this.goWait = HealthQuery.goDuration(wait);
    this.partition = partition;
    this.steps = new WatchSteps(http, scheduler, this::unexpected);
  }

  void start() {
    steps.execute(this::readSelf);
  }

  /** Adds {@code l}; it hears the current reading at once (on the scheduler) if there is one. */
  void addListener(Listener l) {
    listeners.add(l);
    steps.execute(() -> {
      NetworkCoordinates c = current;
      if (c != null && listeners.contains(l)) {
        deliver(l, c);
      }
    });
  }

  /** Removes {@code l}; returns true if no listener is left. */
  boolean removeListener(Listener l) {
    listeners.remove(l);
    return listeners.isEmpty();
  }

  /** Stops the loop: drops the waiting step and cancels the request in flight. Idempotent, any thread. */
  void close() {
    steps.close();
  }

  /** The last good reading, or null before the first. */
  @Nullable NetworkCoordinates current() {
    return current;
  }

  // ---------------------------------------------------------------------------------------------
  // Steps

  private void readSelf() {
    steps.send("/v1/agent/self", READ_TIMEOUT, this::onSelf, this::fail);
  }

  private void readNodes() {
    StringBuilder q = new StringBuilder("/v1/coordinate/nodes?stale");
    if (partition != null) {
      q.append("&partition=").append(URLEncoder.encode(partition, StandardCharsets.UTF_8));
    }
    if (index != 0) {
      q.append("&index=").append(Long.toUnsignedString(index)).append("&wait=").append(goWait);
    }
    steps.send(q.toString(), index != 0 ? HealthQuery.readTimeout(wait) : READ_TIMEOUT, this::onNodes, this::fail);
  }

  private void onSelf(ConsulHttp.Reply reply) {
    if (reply.status() != 200) {
      fail("http_" + reply.status(), hint(reply, "agent:read"));
      return;
    }
    JsonNode body = parse(reply);
    AgentSelf s = body == null ? null : AgentSelf.parse(body);
    if (s == null) {
      fail("malformed_self", "/v1/agent/self names no node (Config.NodeName, Member.Name)");
      return;
    }
    self = s;
    index = 0;
    readNodes();
  }

  private void onNodes(ConsulHttp.Reply reply) {
    AgentSelf s = self;
    if (s == null) {
      readSelf();
      return;
    }
    if (reply.status() != 200) {
      fail("http_" + reply.status(), hint(reply, "node:read"));
      return;
    }
    JsonNode body = parse(reply);
    if (body == null || !body.isArray()) {
      fail("malformed", "/v1/coordinate/nodes is not a JSON array");
      return;
    }
    long next = WatchSteps.blockingIndex(reply, this::fail);
    if (next == 0) {
      return;
    }
    boolean filtered = "true".equalsIgnoreCase(reply.header("X-Consul-Results-Filtered-By-ACLs"));
    if (filtered && !aclWarned) {
      LOG.log(Level.WARNING, "Consul left out the coordinates of nodes the ACL token may not read (node:read);"
          + " their instances rank as of unknown distance");
    }
    aclWarned = filtered;
    NetworkCoordinates c = NetworkCoordinates.of(s, body);
    logSkips(c.skipped());
    if (lastErrorReason != null) {
      LOG.log(Level.INFO, "Consul coordinates read again after a failure ({0})", lastErrorReason);
    }
    lastErrorReason = null;
    backoff.reset();
    boolean backwards = Long.compareUnsigned(next, index) < 0;
    index = backwards ? 0 : next;
    current = c;
    for (Listener l : listeners) {
      deliver(l, c);
    }
    steps.schedule(this::readNodes, minIntervalNanos);
  }

  private void logSkips(List<NetworkCoordinates.Skip> skipped) {
    Set<String> keys = new HashSet<>();
    for (NetworkCoordinates.Skip s : skipped) {
      String key = s.node() + "/" + s.segment() + "/" + s.reason();
      keys.add(key);
      if (!lastSkipKeys.contains(key)) {
        LOG.log(Level.WARNING, "skipped the network coordinate of Consul node {0} ({1}): {2}", s.node(), s.reason(),
            s.detail());
      }
    }
    lastSkipKeys = keys;
  }

  private void fail(String reason, String detail) {
    index = 0;
    self = null;
    long delay = backoff.nextDelayNanos();
    steps.schedule(this::readSelf, delay);
    Level level = reason.equals(lastErrorReason) ? Level.DEBUG : Level.WARNING;
    LOG.log(level, "Consul coordinates unavailable ({0}: {1}); keeping the last reading, retrying in {2} ms",
        reason, detail, TimeUnit.NANOSECONDS.toMillis(delay));
    lastErrorReason = reason;
    for (Listener l : listeners) {
      try {
        l.coordinateError(reason);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "a coordinate listener failed", e);
      }
    }
  }

  private void unexpected(Throwable t) {
    try {
      steps.cancel();
      LOG.log(Level.ERROR, "unexpected failure in the Consul coordinate watch; backing off", t);
      fail("unexpected", String.valueOf(t));
    } catch (RuntimeException again) {
      LOG.log(Level.ERROR, "the Consul coordinate watch could not recover from a failure", again);
    }
  }

  private static void deliver(Listener l, NetworkCoordinates c) {
    try {
      l.coordinates(c);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "a coordinate listener failed", e);
    }
  }

  private static @Nullable JsonNode parse(ConsulHttp.Reply reply) {
    try {
      return reply.body() == null ? null : JSON.readTree(reply.body());
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  /** The reply's first line, and for 403 the ACL right the request needs. */
  private static String hint(ConsulHttp.Reply reply, String right) {
    String body = reply.body() == null ? "" : reply.body().replaceAll("\\s+", " ").trim();
    if (body.length() > 200) {
      body = body.substring(0, 200) + "...";
    }
    return reply.status() == 403 ? body + " (closeness needs " + right + ")" : body;
  }

  @Override
  public String toString() {
    return "CoordinateWatch{index=" + Long.toUnsignedString(index) + ", listeners=" + listeners.size() + "}";
  }
}
