package dev.fairway.lb.kubernetes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.DiscoveryMetrics;
import java.lang.System.Logger.Level;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The list-then-watch loop of one Service's EndpointSlices, as client-go's reflector runs it, driven by
 * a {@link Scheduler}: no thread of its own. Every step runs on the scheduler, one at a time; replies
 * and stream lines hop onto it, tagged with the attempt that asked for them, so a late line of a
 * cancelled watch is dropped.
 *
 * <ul>
 *   <li><b>List</b> ({@code GET .../endpointslices?labelSelector=kubernetes.io/service-name=S}): the
 *       slices replace the known ones (a slice that cannot be read keeps its last good version), the
 *       merged list is published, and the watch starts from the list's {@code resourceVersion}.
 *   <li><b>Watch</b> ({@code watch=1&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=T}, T
 *       drawn between the configured timeout and twice it, as client-go does, so a fleet does not
 *       reconnect in step): {@code ADDED}/{@code MODIFIED} replace a slice, {@code DELETED} removes it,
 *       {@code BOOKMARK} only moves the resume point; each change is merged and published. A watch the
 *       server ends is resumed at once from the last resourceVersion seen.
 *   <li><b>410 Gone</b> (as the HTTP status or as an {@code ERROR} event with a {@code Status} of code
 *       410): the resume point is too old; the loop lists again at once, and the last good list keeps
 *       serving until the new list replaces it.
 *   <li><b>A stalled stream</b> (no end after its {@code timeoutSeconds} plus a grace period) is
 *       cancelled and resumed after a backoff delay.
 *   <li><b>Errors</b> (transport, 5xx, 429 with {@code Retry-After}, an unreadable reply or event) keep
 *       the last good list, count a reason, and retry after {@link Backoff}: a watch resumes from its
 *       resourceVersion, a list lists again. An unreadable event may hide a change, so it leads to a new
 *       list. {@code 403} and {@code 401} are logged with the permission or token needed and fail
 *       {@code whenReady()} if no list came yet; the loop keeps retrying.
 *   <li><b>Staleness</b>: 0 while a watch is open (the server pushes every change), else the time since
 *       the server last confirmed the list (a list reply, a watch's opening, event, bookmark or end).
 * </ul>
 */
final class SliceWatch {
  private static final System.Logger LOG = System.getLogger(KubernetesTargetSource.class.getName());
  private static final ObjectMapper JSON = new ObjectMapper();
  /** A watch that ends before this and brought nothing is treated as a failure, so a proxy cannot make a hot loop. */
  static final long SHORTEST_HEALTHY_WATCH_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** Where steps run. {@link #execute} hops without waiting; {@link #schedule} waits first. */
  interface Scheduler extends Executor {
    Future<?> schedule(Runnable task, long delayNanos);
  }

  /** What the watch needs from its owner: where lists go and where an access refusal goes. */
  interface Sink {
    void publish(List<Target> targets);

    void refused(KubernetesApiException e);
  }

  /** The fixed settings of one watch. */
  record Settings(String service, String namespace, PortChoice port, String localZone, boolean preferIpv6,
      long listTimeoutNanos, long watchTimeoutSeconds, long watchGraceNanos) {}

  private final Settings settings;
  private final ApiHttp http;
  private final Scheduler scheduler;
  private final LongSupplier ticker;
  private final java.util.function.DoubleSupplier random;
  private final Backoff backoff;
  private final DiscoveryMetrics metrics;
  private final Sink sink;
  private final String listPath;

  private volatile boolean closed;
  private volatile boolean watching;
  private volatile long confirmedNanos;

  // Loop state: touched only by steps, which run one at a time.
  private int attempt; // tags replies and lines; a step for an older attempt is dropped
  private final Map<String, Slice> slices = new TreeMap<>();
  private final Map<String, List<Skip>> sliceSkips = new HashMap<>();
  private Set<String> reportedSkips = Set.of();
  private String resourceVersion = ""; // "" until the first list
  private ApiHttp.@Nullable Call watchCall;
  private @Nullable Future<?> pending;
  private long watchStartNanos;
  private boolean watchBroughtSomething;
  private @Nullable String lastErrorReason;
  private int errorsSinceSuccess;
  private int targetCount;
  private boolean hintsUsed;
  private boolean fallback;

  SliceWatch(Settings settings, ApiHttp http, Scheduler scheduler, LongSupplier ticker,
      java.util.function.DoubleSupplier random, Backoff backoff, DiscoveryMetrics metrics, Sink sink) {
    this.settings = settings;
    this.http = http;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.random = random;
    this.backoff = backoff;
    this.metrics = metrics;
    this.sink = sink;
    this.listPath = "/apis/discovery.k8s.io/v1/namespaces/" + encode(settings.namespace()) + "/endpointslices"
        + "?labelSelector=" + encode("kubernetes.io/service-name=" + settings.service());
    this.confirmedNanos = ticker.getAsLong();
  }

  static String encode(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
  }

  void start() {
    execute(this::list);
  }

  /** Stops the loop: drops the waiting step and closes the watch stream. Idempotent, any thread. */
  void close() {
    closed = true;
    watching = false;
    scheduler.execute(this::cancelAll);
  }

  long stalenessNanos() {
    return watching ? 0 : Math.max(0, ticker.getAsLong() - confirmedNanos);
  }

  String listPath() {
    return listPath;
  }

  // ---------------------------------------------------------------------------------------------
  // Steps

  private void list() {
    int a = ++attempt;
    CompletableFuture<ApiHttp.Reply> call =
        http.get(listPath, java.time.Duration.ofNanos(settings.listTimeoutNanos()));
    CompletableFuture<?> unused = call.whenCompleteAsync((reply, failure) -> step(a, () -> {
      if (failure != null) {
        transportFailure(unwrap(failure), true);
      } else {
        onList(reply);
      }
    }), scheduler);
  }

  private void onList(ApiHttp.Reply reply) {
    if (reply.status() != 200) {
      refusedOrFailed(reply, true);
      return;
    }
    JsonNode body;
    try {
      body = JSON.readTree(reply.body());
    } catch (JsonProcessingException e) {
      fail("malformed", "the list reply is not JSON: " + firstLine(e.getOriginalMessage()), true);
      return;
    }
    JsonNode rv = body == null ? null : body.path("metadata").path("resourceVersion");
    JsonNode items = body == null ? null : body.path("items");
    if (rv == null || !rv.isTextual() || rv.asText().isEmpty() || items == null
        || !(items.isArray() || items.isNull())) {
      fail("malformed", "the list reply is not an EndpointSliceList with metadata.resourceVersion", true);
      return;
    }
    Map<String, Slice> previous = new HashMap<>(slices);
    slices.clear();
    sliceSkips.clear();
    for (JsonNode item : items) {
      String name = item.path("metadata").path("name").asText("");
      List<Skip> skips = new ArrayList<>();
      Slice s = SliceParser.parse(item, skips);
      if (s != null) {
        slices.put(s.name(), s);
      } else if (previous.containsKey(name)) {
        slices.put(name, previous.get(name)); // its last good version keeps serving
      }
      if (!skips.isEmpty()) {
        sliceSkips.put(name.isEmpty() ? "?" : name, skips);
      }
    }
    resourceVersion = rv.asText();
    succeeded();
    publish();
    watch();
  }

  private void watch() {
    int a = ++attempt;
    long timeout = settings.watchTimeoutSeconds()
        + (long) (settings.watchTimeoutSeconds() * Math.min(Math.max(random.getAsDouble(), 0), 1));
    String path = listPath + "&watch=1&resourceVersion=" + encode(resourceVersion)
        + "&allowWatchBookmarks=true&timeoutSeconds=" + timeout;
    watchStartNanos = ticker.getAsLong();
    watchBroughtSomething = false;
    pending = scheduler.schedule(() -> step(a, this::stalled),
        TimeUnit.SECONDS.toNanos(timeout) + settings.watchGraceNanos());
    watchCall = http.watch(path, new ApiHttp.WatchListener() {
      @Override
      public void opened() {
        execute(() -> step(a, SliceWatch.this::onOpened));
      }

      @Override
      public void line(String line) {
        execute(() -> step(a, () -> onLine(line)));
      }

      @Override
      public void ended(@Nullable Throwable failure) {
        execute(() -> step(a, () -> onEnded(failure)));
      }

      @Override
      public void refused(ApiHttp.Reply reply) {
        execute(() -> step(a, () -> {
          endWatch();
          refusedOrFailed(reply, false);
        }));
      }
    });
  }

  private void onOpened() {
    watching = true;
    confirmedNanos = ticker.getAsLong();
    succeeded();
  }

  private void onLine(String line) {
    confirmedNanos = ticker.getAsLong();
    watchBroughtSomething = true;
    JsonNode event;
    try {
      event = JSON.readTree(line);
    } catch (JsonProcessingException e) {
      endWatch();
      fail("malformed_event", "a watch event that is not JSON: " + firstLine(e.getOriginalMessage()), true);
      return;
    }
    String type = event == null ? "" : event.path("type").asText("");
    JsonNode object = event == null ? null : event.path("object");
    if (object == null || !object.isObject()) {
      endWatch();
      fail("malformed_event", "a watch event without an object (type " + type + ")", true);
      return;
    }
    switch (type) {
      case "ADDED", "MODIFIED" -> {
        String name = object.path("metadata").path("name").asText("");
        List<Skip> skips = new ArrayList<>();
        Slice s = SliceParser.parse(object, skips);
        if (s != null) {
          slices.put(s.name(), s);
        }
        if (skips.isEmpty()) {
          sliceSkips.remove(name);
        } else {
          sliceSkips.put(name.isEmpty() ? "?" : name, skips);
        }
        moveTo(object);
        publish();
      }
      case "DELETED" -> {
        String name = object.path("metadata").path("name").asText("");
        slices.remove(name);
        sliceSkips.remove(name);
        moveTo(object);
        publish();
      }
      case "BOOKMARK" -> moveTo(object);
      case "ERROR" -> {
        endWatch();
        int code = object.path("code").asInt(0);
        if (code == 410) {
          gone("ERROR event " + firstLine(object.path("message").asText("")));
        } else {
          refusedOrFailed(new ApiHttp.Reply(code, object.toString(), null), false);
        }
      }
      default -> {
        endWatch();
        fail("malformed_event", "a watch event of unknown type \"" + type + "\"", true);
      }
    }
  }

  private void moveTo(JsonNode object) {
    JsonNode rv = object.path("metadata").path("resourceVersion");
    if (rv.isTextual() && !rv.asText().isEmpty()) {
      resourceVersion = rv.asText();
    }
  }

  private void onEnded(@Nullable Throwable failure) {
    boolean brought = watchBroughtSomething;
    long lasted = ticker.getAsLong() - watchStartNanos;
    endWatch();
    if (failure != null) {
      transportFailure(unwrap(failure), false);
    } else if (!brought && lasted < SHORTEST_HEALTHY_WATCH_NANOS) {
      fail("watch_closed_early", "the watch ended after " + TimeUnit.NANOSECONDS.toMillis(lasted)
          + " ms with no event", false);
    } else {
      confirmedNanos = ticker.getAsLong();
      watch(); // the server's timeoutSeconds: resume from the last resourceVersion
    }
  }

  private void stalled() {
    endWatch();
    fail("stalled", "the watch stream did not end within its timeoutSeconds plus "
        + TimeUnit.NANOSECONDS.toMillis(settings.watchGraceNanos()) + " ms", false);
  }

  private void gone(String detail) {
    metrics.error("gone");
    LOG.log(Level.DEBUG, "{0}: resourceVersion {1} is too old (410 Gone, {2}); listing again, keeping {3}"
        + " target(s) meanwhile", settings.service(), resourceVersion, detail, targetCount);
    resourceVersion = "";
    list();
  }

  /** A status other than 200 from a list or a watch, or a watch's ERROR event with a Status. */
  private void refusedOrFailed(ApiHttp.Reply reply, boolean wasList) {
    int status = reply.status();
    if (status == 410) {
      gone("HTTP 410");
      return;
    }
    JsonNode statusBody = statusOf(reply.body());
    String message = statusBody == null ? firstLine(reply.body()) : statusBody.path("message").asText("");
    String reason = statusBody == null ? "" : statusBody.path("reason").asText("");
    if (status == 403 || status == 401) {
      String what = status == 403
          ? "the service account needs get, list and watch on endpointslices in API group discovery.k8s.io"
              + " in namespace " + settings.namespace() + " (a Role and a RoleBinding)"
          : "the API server did not accept the token (expired, or not a service-account token)";
      String detail = status + " " + (status == 403 ? "Forbidden" : "Unauthorized") + " reading EndpointSlices: "
          + what + "; the API server said: " + message;
      sink.refused(new KubernetesApiException(status, reason, settings.service() + ": " + detail));
      fail(status == 403 ? "forbidden" : "unauthorized", detail, wasList || resourceVersion.isEmpty());
      return;
    }
    if (status == 429) {
      long retryAfterNanos = TimeUnit.SECONDS.toNanos(Math.min(600, parseLong(reply.retryAfter(), 1)));
      failAfter("throttled", "429 Too Many Requests: " + message, wasList || resourceVersion.isEmpty(),
          Math.max(retryAfterNanos, backoff.nextDelayNanos()));
      return;
    }
    fail("http_" + status, message, wasList || resourceVersion.isEmpty());
  }

  private void transportFailure(Throwable cause, boolean wasList) {
    fail(reason(cause), describe(cause), wasList || resourceVersion.isEmpty());
  }

  private void fail(String reason, String detail, boolean relist) {
    failAfter(reason, detail, relist, backoff.nextDelayNanos());
  }

  /** Counts and logs one failure, then waits {@code delay} before listing again or resuming the watch. */
  private void failAfter(String reason, String detail, boolean relist, long delay) {
    errorsSinceSuccess++;
    metrics.error(reason);
    if (relist) {
      resourceVersion = "";
    }
    int a = ++attempt;
    pending = scheduler.schedule(() -> step(a, relist ? this::list : this::watch), delay);
    Level level = reason.equals(lastErrorReason) ? Level.DEBUG : Level.WARNING;
    LOG.log(level, "{0}: {1} ({2}); keeping {3} target(s), {4} in {5} ms", settings.service(), reason, detail,
        targetCount, relist ? "listing again" : "resuming the watch", TimeUnit.NANOSECONDS.toMillis(delay));
    lastErrorReason = reason;
  }

  private void succeeded() {
    if (errorsSinceSuccess > 0) {
      LOG.log(Level.INFO, "{0}: the API server answers again after {1} failed attempt(s)", settings.service(),
          errorsSinceSuccess);
    }
    errorsSinceSuccess = 0;
    lastErrorReason = null;
    backoff.reset();
    confirmedNanos = ticker.getAsLong();
  }

  private void publish() {
    EndpointMerge.Merged merged = EndpointMerge.merge(slices.values(), settings.port(), settings.localZone(),
        settings.preferIpv6());
    List<Skip> skips = new ArrayList<>(merged.skips());
    for (List<Skip> s : sliceSkips.values()) {
      skips.addAll(s);
    }
    reportSkips(skips);
    if (merged.hintsUsed() != hintsUsed) {
      LOG.log(Level.INFO, "{0}: {1} topology hints for zone {2}", settings.service(),
          merged.hintsUsed() ? "following" : "no longer following", settings.localZone());
      hintsUsed = merged.hintsUsed();
    }
    if (merged.terminatingFallback() != fallback) {
      LOG.log(merged.terminatingFallback() ? Level.WARNING : Level.INFO, merged.terminatingFallback()
          ? "{0}: no ready endpoint; calls go to the {1} serving, terminating one(s) until one is ready"
          : "{0}: ready endpoints again; terminating ones take no new calls", settings.service(),
          merged.targets().size());
      fallback = merged.terminatingFallback();
    }
    targetCount = merged.targets().size();
    sink.publish(merged.targets());
  }

  private void reportSkips(List<Skip> skips) {
    if (skips.isEmpty() && reportedSkips.isEmpty()) {
      return;
    }
    Set<String> keys = new HashSet<>();
    for (Skip s : skips) {
      String key = s.key() + "/" + s.reason();
      keys.add(key);
      if (!reportedSkips.contains(key)) {
        // Logged and counted when an entry turns bad, not on every event that still carries it.
        LOG.log(Level.WARNING, "{0}: skipped EndpointSlice entry {1} ({2}): {3}", settings.service(), s.key(),
            s.reason(), s.detail());
        metrics.skipped(s.reason());
      }
    }
    reportedSkips = keys;
  }

  private void endWatch() {
    watching = false;
    ApiHttp.Call c = watchCall;
    watchCall = null;
    if (c != null) {
      c.cancel();
    }
    Future<?> p = pending;
    pending = null;
    if (p != null) {
      p.cancel(false);
    }
  }

  private void cancelAll() {
    attempt++;
    endWatch();
  }

  private void execute(Runnable step) {
    if (!closed) {
      scheduler.execute(step);
    }
  }

  /** Runs {@code body} if the loop is open and still at attempt {@code a}; nothing escapes it. */
  private void step(int a, Runnable body) {
    if (closed || a != attempt) {
      return;
    }
    try {
      body.run();
    } catch (RuntimeException e) {
      LOG.log(Level.ERROR, settings.service() + ": unexpected failure in the EndpointSlice watch; backing off", e);
      try {
        endWatch();
        attempt++;
        fail("unexpected", String.valueOf(e), true);
      } catch (RuntimeException again) {
        LOG.log(Level.ERROR, settings.service() + ": the EndpointSlice watch could not recover", again);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Small pure readings

  private static @Nullable JsonNode statusOf(String body) {
    try {
      JsonNode n = JSON.readTree(body);
      return n != null && "Status".equals(n.path("kind").asText("")) ? n : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  static String reason(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof HttpConnectTimeoutException) {
        return "connect";
      }
      if (c instanceof HttpTimeoutException) {
        return "timeout";
      }
      if (c instanceof java.net.ConnectException) {
        return "connect";
      }
      if (c instanceof javax.net.ssl.SSLException) {
        return "tls";
      }
    }
    return "io";
  }

  static String describe(Throwable e) {
    Throwable root = e;
    for (int i = 0; i < 8 && root.getCause() != null && root.getCause() != root; i++) {
      root = root.getCause();
    }
    return firstLine(root == e ? String.valueOf(e) : e + " / " + root);
  }

  static String firstLine(@Nullable String s) {
    if (s == null) {
      return "";
    }
    String m = s.replaceAll("\\s+", " ").trim();
    return m.length() > 200 ? m.substring(0, 200) + "..." : m;
  }

  private static long parseLong(@Nullable String s, long otherwise) {
    if (s == null) {
      return otherwise;
    }
    try {
      return Math.max(0, Long.parseLong(s.trim()));
    } catch (NumberFormatException e) {
      return otherwise;
    }
  }
}
