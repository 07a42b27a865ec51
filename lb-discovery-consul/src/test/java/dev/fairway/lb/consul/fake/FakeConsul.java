package dev.fairway.lb.consul.fake;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Headers;
import okhttp3.HttpUrl;

/**
 * An in-process Consul agent for tests: {@code GET /v1/health/service/<name>}, {@code GET /v1/agent/self}
 * and {@code GET /v1/coordinate/nodes} on a MockWebServer bound to 127.0.0.1, answering like Consul does.
 *
 * <ul>
 *   <li>Per-service instances and a monotonic raft-like index; every change moves it, and a service's
 *       {@code X-Consul-Index} is the index of its last change.
 *   <li>Blocking queries: {@code index} above 0 waits until the service's index passes it, or until
 *       {@code wait} (Go syntax, default 5m, max 10m) plus up to wait/16 of random jitter.
 *   <li>{@code passing} (bare or a Go bool), {@code tag} (repeatable, all must match), {@code dc}
 *       (other datacenters answer 500 {@code No path to datacenter}), 400 {@code Invalid index} /
 *       {@code Invalid wait time} / {@code Invalid value for ?passing}.
 *   <li>ACLs as a real agent with {@code default_policy = deny}: after {@link #requireToken(String)},
 *       that {@code X-Consul-Token} reads everything; no token (the anonymous one) or a token added with
 *       {@link #addTokenWithoutRead(String)} gets {@code 200 []} with
 *       {@code X-Consul-Results-Filtered-By-ACLs: true}; an unknown token gets 403 {@code ACL not found}.
 *   <li>Tags match case-insensitively, as in Consul; {@code wait} of 0 or below means the 5-minute
 *       default.
 *   <li>TLS and mutual TLS with {@link #startTls}.
 *   <li>Go's header spelling: {@code X-Consul-Index}, {@code X-Consul-Knownleader},
 *       {@code X-Consul-Lastcontact}. Entries come back in a shuffled order.
 *   <li>Every {@link Fault}, plus agent down and back on the same port, and an index restore.
 *   <li>A log of every request ({@link #requests()}, or one endpoint's with {@link #requests(String)}) to
 *       assert rates, URLs and headers.
 *   <li>Network coordinates ({@link #setCoordinate}): {@code /v1/coordinate/nodes} lists
 *       {@code {Node, Segment, Coord{Vec, Error, Adjustment, Height}}} sorted by node, as Consul's state
 *       store does, under an index that moves with every coordinate change; blocking queries, {@code dc},
 *       {@code segment} and the ACL filter ({@code node:read}) as for health. {@code /v1/agent/self}
 *       answers {@code Config} (NodeName, Datacenter, ...), {@code DebugConfig.SegmentName}, the agent's
 *       {@code Coord} and {@code Member}; it needs {@code agent:read} (403 {@code Permission denied}
 *       otherwise). {@link #disableCoordinates()} acts as {@code disable_coordinates = true}: a null
 *       {@code Coord} and 401 {@code Coordinate support disabled}. {@link #coordinateFault(Fault)} injects
 *       a fault into the coordinate endpoint only; {@link #fault(Fault)} is the health endpoint's.
 * </ul>
 *
 * <p>Blocked requests are woken when the fake (or the agent) closes, so closing never hangs.
 * Thread-safe.
 */
public final class FakeConsul implements Closeable {
  /** One request as the fake saw it. */
  public record SeenRequest(long atNanos, String method, String target, String token, int status) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String FILTERED = "filtered by ACLs";

  private final Object lock = new Object();
  private final String datacenter;
  private final Random shuffle = new Random(42);
  // Guarded by lock.
  private final Map<String, Map<String, ObjectNode>> services = new HashMap<>();
  private final Map<String, Long> serviceIndex = new HashMap<>();
  private final List<SeenRequest> requests = new ArrayList<>();
  private long index = 10;
  private Fault fault;
  private String requiredToken;
  private final java.util.Set<String> tokensWithoutRead = new java.util.HashSet<>();
  private boolean closed;
  // Coordinates, guarded by lock: "node/segment" -> the entry, and the index of the last change.
  private final Map<String, ObjectNode> coordinates = new java.util.TreeMap<>();
  private long coordinateIndex = 1;
  private String agentNode = "agent-one";
  private boolean coordinatesDisabled;
  private Fault coordinateFault;

  private final int port;
  private final javax.net.ssl.SSLSocketFactory tls;
  private final boolean requireClientAuth;
  private final NoDelayServerSocketFactory sockets = new NoDelayServerSocketFactory();
  private volatile MockWebServer server;
  private volatile ConsulDispatcher dispatcher;

  private FakeConsul(String datacenter, javax.net.ssl.SSLSocketFactory tls, boolean requireClientAuth)
      throws IOException {
    this.datacenter = datacenter;
    this.tls = tls;
    this.requireClientAuth = requireClientAuth;
    this.server = newServer(0);
    this.port = server.getPort();
  }

  /** Starts a fake agent of datacenter {@code dc1} on an ephemeral loopback port. */
  public static FakeConsul start() {
    try {
      return new FakeConsul("dc1", null, false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts a fake agent that speaks only https, with the server side of {@code serverTls} (e.g.
   * okhttp-tls {@code HandshakeCertificates.sslSocketFactory()}); {@code requireClientAuth} makes it
   * refuse clients without a trusted certificate, as {@code verify_incoming} does.
   */
  public static FakeConsul startTls(javax.net.ssl.SSLSocketFactory serverTls, boolean requireClientAuth) {
    try {
      return new FakeConsul("dc1", serverTls, requireClientAuth);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private final List<String> serverNames = new java.util.concurrent.CopyOnWriteArrayList<>();

  /**
   * For a TLS fake: the SNI host names each request's handshake asked for, comma-separated ("" when the
   * client sent none), in arrival order.
   */
  public List<String> handshakeServerNames() {
    return List.copyOf(serverNames);
  }

  /** {@code http://127.0.0.1:<port>}, or {@code https://} for a TLS fake. */
  public String url() {
    return (tls == null ? "http" : "https") + "://127.0.0.1:" + port;
  }

  /** TCP connections the agent accepted so far (over every stop and start). */
  public int connectionsAccepted() {
    return sockets.accepted();
  }

  public int port() {
    return port;
  }

  // ---------------------------------------------------------------------------------------------
  // Data

  /** Registers (or replaces, by node and id) an instance of {@code service}. */
  public void register(String service, Instance instance) {
    put(service, instance.node + "/" + instance.id, null, instance);
  }

  /** Registers raw health entries (a JSON array in the shape of the real reply), keyed by node and id. */
  public void registerRaw(String service, String jsonArray) {
    try {
      JsonNode array = JSON.readTree(jsonArray);
      synchronized (lock) {
        Map<String, ObjectNode> entries = services.computeIfAbsent(service, s -> new LinkedHashMap<>());
        for (JsonNode e : array) {
          String key = e.path("Node").path("Node").asText() + "/" + e.path("Service").path("ID").asText();
          entries.put(key, (ObjectNode) e.deepCopy());
        }
        changed(service);
      }
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not a JSON array: " + e.getMessage(), e);
    }
  }

  /** Registers many instances with one index change. */
  public void registerAll(String service, List<Instance> instances) {
    synchronized (lock) {
      Map<String, ObjectNode> entries = services.computeIfAbsent(service, s -> new LinkedHashMap<>());
      for (Instance i : instances) {
        entries.put(i.node + "/" + i.id, i.toJson(service, datacenter, index + 1));
      }
      changed(service);
    }
  }

  private void put(String service, String key, ObjectNode raw, Instance instance) {
    synchronized (lock) {
      services.computeIfAbsent(service, s -> new LinkedHashMap<>())
          .put(key, raw != null ? raw : instance.toJson(service, datacenter, index + 1));
      changed(service);
    }
  }

  /** Deregisters every instance of {@code service} whose Service.ID is {@code serviceId}. */
  public void deregister(String service, String serviceId) {
    synchronized (lock) {
      Map<String, ObjectNode> entries = services.getOrDefault(service, Map.of());
      if (entries.values().removeIf(e -> e.path("Service").path("ID").asText().equals(serviceId))) {
        changed(service);
      }
    }
  }

  /** Sets the status of the service checks of instance {@code serviceId} (passing, warning, critical). */
  public void setStatus(String service, String serviceId, String status) {
    synchronized (lock) {
      for (ObjectNode e : services.getOrDefault(service, Map.of()).values()) {
        if (e.path("Service").path("ID").asText().equals(serviceId)) {
          for (JsonNode c : e.path("Checks")) {
            if (!c.path("ServiceID").asText().isEmpty()) {
              ((ObjectNode) c).put("Status", status);
            }
          }
        }
      }
      changed(service);
    }
  }

  /**
   * Puts instance {@code serviceId} into or out of maintenance, as {@code consul maint -enable
   * -service=<id>} does: a critical check {@code _service_maintenance:<id>} of type
   * {@code maintenance} with the agent's default reason in its notes.
   */
  public void maintenance(String service, String serviceId, boolean on) {
    synchronized (lock) {
      for (ObjectNode e : services.getOrDefault(service, Map.of()).values()) {
        if (e.path("Service").path("ID").asText().equals(serviceId)) {
          String node = e.path("Node").path("Node").asText();
          setCheck(e, "_service_maintenance:" + serviceId, on ? maintenanceCheck(node, "_service_maintenance:"
              + serviceId, "Service Maintenance Mode", SERVICE_MAINT_REASON, serviceId, service) : null);
        }
      }
      changed(service);
    }
  }

  /**
   * Puts a whole node into or out of maintenance, as {@code consul maint -enable} on its agent does: a
   * node check {@code _node_maintenance} (no service id), which Consul lists with every instance on
   * that node, of every service.
   */
  public void nodeMaintenance(String node, boolean on) {
    synchronized (lock) {
      for (Map.Entry<String, Map<String, ObjectNode>> byService : services.entrySet()) {
        boolean touched = false;
        for (ObjectNode e : byService.getValue().values()) {
          if (e.path("Node").path("Node").asText().equals(node)) {
            setCheck(e, "_node_maintenance", on ? maintenanceCheck(node, "_node_maintenance", "Node Maintenance Mode",
                NODE_MAINT_REASON, "", "") : null);
            touched = true;
          }
        }
        if (touched) {
          changed(byService.getKey());
        }
      }
    }
  }

  // The agent's own words when `consul maint` is given no -reason (agent/agent.go).
  private static final String SERVICE_MAINT_REASON =
      "Maintenance mode is enabled for this service, but no reason was provided. This is a default message.";
  private static final String NODE_MAINT_REASON =
      "Maintenance mode is enabled for this node, but no reason was provided. This is a default message.";

  private static ObjectNode maintenanceCheck(String node, String checkId, String name, String notes, String serviceId,
      String serviceName) {
    ObjectNode c = Instance.check(node, checkId, name, "critical", serviceId, serviceName, List.of());
    c.put("Notes", notes);
    c.put("Type", "maintenance");
    return c;
  }

  /** Replaces the check {@code checkId} of entry {@code e} with {@code check}, or removes it when null. */
  private static void setCheck(ObjectNode e, String checkId, @org.jspecify.annotations.Nullable ObjectNode check) {
    ArrayNode checks = (ArrayNode) e.get("Checks");
    for (int i = checks.size() - 1; i >= 0; i--) {
      if (checks.get(i).path("CheckID").asText().equals(checkId)) {
        checks.remove(i);
      }
    }
    if (check != null) {
      checks.add(check);
    }
  }

  /** Moves the index of {@code service} without changing its data: the same body under a new index. */
  public void touch(String service) {
    synchronized (lock) {
      changed(service);
    }
  }

  /**
   * Sets the raft index back to {@code newIndex}, as a restore from an older snapshot does: every
   * service's index drops to at most {@code newIndex}. Clients blocking on a higher index wait out
   * their {@code wait} and then see the index go backwards.
   */
  public void restoreIndex(long newIndex) {
    if (newIndex < 1) {
      throw new IllegalArgumentException("newIndex: " + newIndex + " (expected: >= 1)");
    }
    synchronized (lock) {
      index = newIndex;
      serviceIndex.replaceAll((s, i) -> Math.min(i, newIndex));
      coordinateIndex = Math.min(coordinateIndex, newIndex);
      lock.notifyAll();
    }
  }

  /** The current index of {@code service}. */
  public long index(String service) {
    synchronized (lock) {
      return serviceIndex.getOrDefault(service, index);
    }
  }

  private void changed(String service) {
    index++;
    serviceIndex.put(service, index);
    lock.notifyAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Network coordinates

  /** The local agent's node name, as {@code /v1/agent/self} reports it. Default {@code agent-one}. */
  public void agentNode(String node) {
    synchronized (lock) {
      agentNode = node;
    }
  }

  /** Sets the LAN coordinate of {@code node} in the default segment (seconds, as Serf keeps them). */
  public void setCoordinate(String node, double[] vec, double error, double adjustment, double height) {
    ObjectNode c = JSON.createObjectNode();
    ArrayNode v = c.putArray("Vec");
    for (double d : vec) {
      v.add(d);
    }
    c.put("Error", error);
    c.put("Adjustment", adjustment);
    c.put("Height", height);
    putCoordinate(node, "", c);
  }

  /** Sets the raw {@code Coord} JSON (any value, {@code null} included) of {@code node} in {@code segment}. */
  public void setCoordinateRaw(String node, String segment, String coordJson) {
    try {
      putCoordinate(node, segment, JSON.readTree(coordJson));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
    }
  }

  private void putCoordinate(String node, String segment, JsonNode coord) {
    ObjectNode e = JSON.createObjectNode();
    e.put("Node", node);
    e.put("Segment", segment);
    e.set("Coord", coord);
    synchronized (lock) {
      coordinates.put(node + "/" + segment, e);
      coordinatesChanged();
    }
  }

  /** Removes every coordinate of {@code node} (a node deregistered from the catalog). */
  public void removeCoordinate(String node) {
    synchronized (lock) {
      if (coordinates.keySet().removeIf(k -> k.startsWith(node + "/"))) {
        coordinatesChanged();
      }
    }
  }

  /** As an agent with {@code disable_coordinates = true}. */
  public void disableCoordinates() {
    synchronized (lock) {
      coordinatesDisabled = true;
      lock.notifyAll();
    }
  }

  /** Injects {@code f} into {@code /v1/coordinate/nodes} until {@code coordinateFault(null)}. */
  public void coordinateFault(Fault f) {
    synchronized (lock) {
      coordinateFault = f;
      lock.notifyAll();
    }
  }

  /** The index of the last coordinate change. */
  public long coordinateIndex() {
    synchronized (lock) {
      return coordinateIndex;
    }
  }

  private void coordinatesChanged() {
    index++;
    coordinateIndex = index;
    lock.notifyAll();
  }

  // ---------------------------------------------------------------------------------------------
  // Behaviour

  /** ACLs on, default policy deny: {@code token} may read every service; others see filtered replies. */
  public void requireToken(String token) {
    synchronized (lock) {
      requiredToken = token;
    }
  }

  /** A token Consul knows but whose policy lacks {@code service:read}: its replies are filtered to {@code []}. */
  public void addTokenWithoutRead(String token) {
    synchronized (lock) {
      tokensWithoutRead.add(token);
    }
  }

  /** Injects {@code f} until {@link #clearFault()}. */
  public void fault(Fault f) {
    synchronized (lock) {
      fault = f;
      lock.notifyAll();
    }
  }

  /** Back to normal; stalled requests are answered now. */
  public void clearFault() {
    fault(null);
  }

  /** Agent down: the port refuses connections and open connections are closed. */
  public void stopAgent() {
    MockWebServer s = server;
    if (s != null) {
      server = null;
      s.close();
    }
  }

  /** Agent back, on the same port. */
  public void startAgent() {
    if (server != null) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (true) {
      try {
        server = newServer(port);
        return;
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new UncheckedIOException("port " + port + " did not come free", e);
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(ie);
        }
      }
    }
  }

  private MockWebServer newServer(int onPort) throws IOException {
    MockWebServer s = new MockWebServer();
    s.setServerSocketFactory(sockets);
    if (tls != null) {
      s.useHttps(tls);
      if (requireClientAuth) {
        s.requireClientAuth();
      }
    }
    ConsulDispatcher d = new ConsulDispatcher();
    s.setDispatcher(d);
    try {
      s.start(InetAddress.getByName("127.0.0.1"), onPort);
    } catch (IOException e) {
      s.close();
      throw e;
    }
    dispatcher = d;
    return s;
  }

  /** Every request so far, oldest first. */
  public List<SeenRequest> requests() {
    synchronized (lock) {
      return List.copyOf(requests);
    }
  }

  /** Every request whose path starts with {@code pathPrefix} (such as {@code /v1/health/}), oldest first. */
  public List<SeenRequest> requests(String pathPrefix) {
    synchronized (lock) {
      List<SeenRequest> out = new ArrayList<>();
      for (SeenRequest r : requests) {
        if (r.target().startsWith(pathPrefix)) {
          out.add(r);
        }
      }
      return out;
    }
  }

  /** Requests seen at or after {@code sinceNanos} ({@link System#nanoTime()}). */
  public List<SeenRequest> requestsSince(long sinceNanos) {
    synchronized (lock) {
      List<SeenRequest> out = new ArrayList<>();
      for (SeenRequest r : requests) {
        if (r.atNanos() >= sinceNanos) {
          out.add(r);
        }
      }
      return out;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    stopAgent();
  }

  // ---------------------------------------------------------------------------------------------
  // Serving

  private final class ConsulDispatcher extends Dispatcher {
    private volatile boolean dispatcherClosed;

    @Override
    public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
      int slot;
      SeenRequest arrived = new SeenRequest(System.nanoTime(), request.getMethod(), request.getTarget(),
          request.getHeaders().get("X-Consul-Token"), 0);
      if (request.getHandshake() != null) {
        serverNames.add(String.join(",", request.getHandshakeServerNames()));
      }
      synchronized (lock) {
        slot = requests.size();
        requests.add(arrived); // logged on arrival (status 0 while in flight) so rates count blocked requests
      }
      MockResponse response;
      try {
        response = serve(request);
      } catch (RuntimeException e) {
        response = text(500, "fake consul failed: " + e);
      }
      synchronized (lock) {
        requests.set(slot, new SeenRequest(arrived.atNanos(), arrived.method(), arrived.target(), arrived.token(),
            response.getCode()));
      }
      return response;
    }

    private boolean stopped() {
      return closed || dispatcherClosed;
    }

    private MockResponse serve(RecordedRequest request) throws InterruptedException {
      HttpUrl url = request.getUrl();
      List<String> path = url.pathSegments();
      if ("GET".equals(request.getMethod()) && path.equals(List.of("v1", "agent", "self"))) {
        return agentSelf(request);
      }
      if ("GET".equals(request.getMethod()) && path.equals(List.of("v1", "coordinate", "nodes"))) {
        return coordinateNodes(request);
      }
      if (!"GET".equals(request.getMethod()) || path.size() != 4 || !path.get(0).equals("v1")
          || !path.get(1).equals("health") || !path.get(2).equals("service") || path.get(3).isEmpty()) {
        return text(404, "Not found");
      }
      String service = path.get(3);
      Fault f;
      synchronized (lock) {
        f = fault;
      }
      if (f == Fault.STALL) {
        stall();
      } else if (f != null && f.text != null) {
        return text(f.status, f.text);
      }

      String tokenError = checkToken(request.getHeaders());
      boolean filteredByAcl = FILTERED.equals(tokenError);
      if (tokenError != null && !filteredByAcl) {
        return text(403, tokenError);
      }
      String dc = url.queryParameter("dc");
      if (dc != null && !dc.equals(datacenter)) {
        return text(500, "No path to datacenter");
      }
      boolean passing;
      try {
        passing = goBool(url, "passing");
      } catch (IllegalArgumentException e) {
        return text(400, "Invalid value for ?passing");
      }
      long minIndex = 0;
      String idx = url.queryParameter("index");
      if (idx != null && !idx.isEmpty()) {
        try {
          minIndex = Long.parseUnsignedLong(idx);
        } catch (NumberFormatException e) {
          return text(400, "Invalid index");
        }
      }
      Duration wait = Duration.ofMinutes(5);
      String w = url.queryParameter("wait");
      if (w != null && !w.isEmpty()) {
        try {
          wait = GoDuration.parse(w);
        } catch (IllegalArgumentException e) {
          return text(400, "Invalid wait time");
        }
      }
      if (wait.isZero() || wait.isNegative()) {
        wait = Duration.ofMinutes(5); // Consul: a wait of 0 or below means the default
      }
      if (wait.compareTo(Duration.ofMinutes(10)) > 0) {
        wait = Duration.ofMinutes(10);
      }
      List<String> tags = url.queryParameterValues("tag").stream().filter(t -> t != null).toList();

      if (f == Fault.INDEX_CHURN) {
        synchronized (lock) {
          changed(service);
        }
      } else if (minIndex > 0 && !answersAtOnce(f)) {
        block(service, minIndex, wait);
        synchronized (lock) {
          f = fault; // a fault set while this request was blocked applies to its answer
        }
      }

      long replyIndex;
      List<ObjectNode> entries = new ArrayList<>();
      synchronized (lock) {
        replyIndex = serviceIndex.getOrDefault(service, index);
        for (ObjectNode e : services.getOrDefault(service, Map.of()).values()) {
          if (matches(e, tags, passing)) {
            entries.add(e.deepCopy());
          }
        }
        Collections.shuffle(entries, shuffle);
      }
      if (f == Fault.EMPTY_LIST || filteredByAcl) {
        entries.clear();
      }
      String body = write(entries);
      MockResponse reply = faulted(f, body, replyIndex);
      return filteredByAcl
          ? reply.newBuilder().setHeader("X-Consul-Results-Filtered-By-ACLs", "true").build()
          : reply;
    }

    private MockResponse agentSelf(RecordedRequest request) {
      String tokenError = checkToken(request.getHeaders());
      if (tokenError != null) {
        // agent:read is not granted to the anonymous token nor to a service-read token: 403, not a filter
        return text(403, FILTERED.equals(tokenError) ? "Permission denied" : tokenError);
      }
      ObjectNode self = JSON.createObjectNode();
      synchronized (lock) {
        ObjectNode config = self.putObject("Config");
        config.put("Datacenter", datacenter);
        config.put("PrimaryDatacenter", datacenter);
        config.put("NodeName", agentNode);
        config.put("NodeID", java.util.UUID.nameUUIDFromBytes(agentNode.getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .toString());
        config.put("Revision", "f1a2b3c4");
        config.put("Server", false);
        config.put("Version", "1.21.4");
        config.put("BuildDate", "2025-08-12T10:00:00Z");
        ObjectNode debug = self.putObject("DebugConfig");
        debug.put("Datacenter", datacenter);
        debug.put("NodeName", agentNode);
        debug.put("SegmentName", "");
        debug.put("DisableCoordinates", coordinatesDisabled);
        ObjectNode own = coordinates.get(agentNode + "/");
        if (coordinatesDisabled || own == null || own.get("Coord").isNull()) {
          self.putNull("Coord");
        } else {
          self.set("Coord", own.get("Coord").deepCopy());
        }
        ObjectNode member = self.putObject("Member");
        member.put("Name", agentNode);
        member.put("Addr", "127.0.0.1");
        member.put("Port", 8301);
        ObjectNode tags = member.putObject("Tags");
        tags.put("build", "1.21.4:f1a2b3c4");
        tags.put("dc", datacenter);
        tags.put("role", "node");
        tags.put("segment", "");
        tags.put("vsn", "2");
        member.put("Status", 1);
        member.put("ProtocolMin", 1);
        member.put("ProtocolMax", 5);
        member.put("ProtocolCur", 2);
        member.put("DelegateMin", 2);
        member.put("DelegateMax", 5);
        member.put("DelegateCur", 4);
        self.putObject("Stats").putObject("agent").put("check_monitors", "0");
        self.putObject("Meta").put("consul-network-segment", "");
      }
      return new MockResponse.Builder().code(200).setHeader("Content-Type", "application/json").body(self.toString())
          .build();
    }

    private MockResponse coordinateNodes(RecordedRequest request) throws InterruptedException {
      HttpUrl url = request.getUrl();
      Fault f;
      synchronized (lock) {
        f = coordinateFault;
        if (coordinatesDisabled) {
          return text(401, "Coordinate support disabled");
        }
      }
      if (f == Fault.STALL) {
        stallCoordinates();
      } else if (f != null && f.text != null) {
        return text(f.status, f.text);
      }
      String tokenError = checkToken(request.getHeaders());
      boolean filteredByAcl = FILTERED.equals(tokenError);
      if (tokenError != null && !filteredByAcl) {
        return text(403, tokenError);
      }
      String dc = url.queryParameter("dc");
      if (dc != null && !dc.equals(datacenter)) {
        return text(500, "No path to datacenter");
      }
      long minIndex = 0;
      String idx = url.queryParameter("index");
      if (idx != null && !idx.isEmpty()) {
        try {
          minIndex = Long.parseUnsignedLong(idx);
        } catch (NumberFormatException e) {
          return text(400, "Invalid index");
        }
      }
      Duration wait = Duration.ofMinutes(5);
      String w = url.queryParameter("wait");
      if (w != null && !w.isEmpty()) {
        try {
          wait = GoDuration.parse(w);
        } catch (IllegalArgumentException e) {
          return text(400, "Invalid wait time");
        }
      }
      if (wait.isZero() || wait.isNegative()) {
        wait = Duration.ofMinutes(5);
      }
      if (wait.compareTo(Duration.ofMinutes(10)) > 0) {
        wait = Duration.ofMinutes(10);
      }
      if (minIndex > 0 && (f == null || f == Fault.NO_KNOWN_LEADER)) {
        blockCoordinates(minIndex, wait);
      }
      boolean bySegment = url.queryParameterNames().contains("segment");
      String segment = bySegment && url.queryParameter("segment") != null ? url.queryParameter("segment") : "";
      ArrayNode out = JSON.createArrayNode();
      long replyIndex;
      synchronized (lock) {
        replyIndex = coordinateIndex;
        if (!filteredByAcl) {
          for (ObjectNode e : coordinates.values()) { // TreeMap: sorted by node, as the state store lists them
            if (!bySegment || e.path("Segment").asText().equals(segment)) {
              out.add(e.deepCopy());
            }
          }
        }
      }
      MockResponse reply = faulted(f, out.toString(), replyIndex);
      return filteredByAcl
          ? reply.newBuilder().setHeader("X-Consul-Results-Filtered-By-ACLs", "true").build()
          : reply;
    }

    private void stallCoordinates() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      synchronized (lock) {
        while (coordinateFault == Fault.STALL && !stopped()) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return;
          }
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      }
    }

    private void blockCoordinates(long minIndex, Duration wait) throws InterruptedException {
      long waitNanos = wait.toNanos();
      long jitter = waitNanos >= 16 ? ThreadLocalRandom.current().nextLong(waitNanos / 16 + 1) : 0;
      long deadline = System.nanoTime() + waitNanos + jitter;
      synchronized (lock) {
        while (!stopped() && coordinateIndex <= minIndex && !coordinatesDisabled) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return;
          }
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      }
    }

    /** Broken replies (bad index, bad body, a proxy's page, a dropped socket) come at once, not after the wait. */
    private boolean answersAtOnce(Fault f) {
      return f != null && f != Fault.NO_KNOWN_LEADER && f != Fault.EMPTY_LIST;
    }

    private MockResponse faulted(Fault f, String body, long replyIndex) {
      MockResponse.Builder b = new MockResponse.Builder().code(200)
          .setHeader("Content-Type", "application/json")
          .setHeader("Vary", "Accept-Encoding")
          .setHeader("X-Consul-Default-Acl-Policy", "allow")
          .setHeader("X-Consul-Effective-Consistency", "leader")
          .setHeader("X-Consul-Index", Long.toString(replyIndex))
          .setHeader("X-Consul-Knownleader", "true")
          .setHeader("X-Consul-Lastcontact", "0")
          .body(body);
      if (f == null) {
        return b.build();
      }
      switch (f) {
        case INDEX_ZERO:
          return b.setHeader("X-Consul-Index", "0").build();
        case INDEX_MISSING:
          return b.removeHeader("X-Consul-Index").build();
        case INDEX_NON_NUMERIC:
          return b.setHeader("X-Consul-Index", "12abc").build();
        case MALFORMED_JSON:
          return b.body("[{\"Node\": {\"Node\": \"n1\", }, ]]").build();
        case TRUNCATED_JSON:
          return b.body(body.substring(0, Math.max(1, body.length() / 2))).build();
        case NULL_BODY:
          return b.body("null").build();
        case HTML_502:
          return html(502, "Bad Gateway");
        case HTML_200:
          return html(200, "Welcome");
        case CLOSE_MID_REPLY:
          return b.onResponseBody(new SocketEffect.CloseSocket()).build();
        case NO_KNOWN_LEADER:
          return b.setHeader("X-Consul-Knownleader", "false").setHeader("X-Consul-Lastcontact", "120000").build();
        default:
          return b.build();
      }
    }

    private void stall() throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      synchronized (lock) {
        while (fault == Fault.STALL && !stopped()) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return;
          }
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      }
    }

    private void block(String service, long minIndex, Duration wait) throws InterruptedException {
      long waitNanos = wait.toNanos();
      long jitter = waitNanos >= 16 ? ThreadLocalRandom.current().nextLong(waitNanos / 16 + 1) : 0;
      long deadline = System.nanoTime() + waitNanos + jitter;
      synchronized (lock) {
        while (!stopped() && serviceIndex.getOrDefault(service, index) <= minIndex && fault != Fault.INDEX_CHURN) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return;
          }
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      }
    }

    private String checkToken(Headers headers) {
      synchronized (lock) {
        if (requiredToken == null) {
          return null;
        }
      }
      String sent = headers.get("X-Consul-Token");
      String bearer = headers.get("Authorization");
      if (sent == null && bearer != null && bearer.startsWith("Bearer ")) {
        sent = bearer.substring(7);
      }
      synchronized (lock) {
        if (sent == null || sent.isEmpty() || tokensWithoutRead.contains(sent)) {
          return FILTERED; // the anonymous token, or one without service:read: results filtered, not 403
        }
        return sent.equals(requiredToken) ? null : "ACL not found";
      }
    }

    @Override
    public void close() {
      dispatcherClosed = true;
      synchronized (lock) {
        lock.notifyAll();
      }
    }
  }

  private static boolean matches(JsonNode entry, List<String> tags, boolean passingOnly) {
    if (!tags.isEmpty()) {
      List<String> have = new ArrayList<>();
      entry.path("Service").path("Tags").forEach(t -> have.add(t.asText().toLowerCase(java.util.Locale.ROOT)));
      for (String t : tags) {
        if (!have.contains(t.toLowerCase(java.util.Locale.ROOT))) { // Consul compares tags case-insensitively
          return false;
        }
      }
    }
    if (passingOnly) {
      for (JsonNode c : entry.path("Checks")) {
        if (!"passing".equals(c.path("Status").asText())) {
          return false;
        }
      }
    }
    return true;
  }

  /** Go's strconv.ParseBool, with a bare {@code ?name} meaning true. */
  private static boolean goBool(HttpUrl url, String name) {
    if (!url.queryParameterNames().contains(name)) {
      return false;
    }
    String v = url.queryParameter(name);
    if (v == null || v.isEmpty()) {
      return true;
    }
    switch (v) {
      case "1": case "t": case "T": case "true": case "TRUE": case "True":
        return true;
      case "0": case "f": case "F": case "false": case "FALSE": case "False":
        return false;
      default:
        throw new IllegalArgumentException(v);
    }
  }

  private static String write(List<ObjectNode> entries) {
    try {
      return JSON.writeValueAsString(entries);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  private static MockResponse text(int code, String body) {
    return new MockResponse.Builder().code(code)
        .setHeader("Content-Type", "text/plain; charset=utf-8")
        .body(body)
        .build();
  }

  private static MockResponse html(int code, String title) {
    return new MockResponse.Builder().code(code)
        .setHeader("Content-Type", "text/html")
        .setHeader("Server", "nginx")
        .body("<html>\r\n<head><title>" + code + " " + title + "</title></head>\r\n<body>\r\n<center><h1>" + code
            + " " + title + "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
        .build();
  }

  @Override
  public String toString() {
    return "FakeConsul{" + url() + "}";
  }

}
