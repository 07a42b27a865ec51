package dev.fairway.lb.kubernetes.fake;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;

/**
 * An in-process Kubernetes API server for EndpointSlices, on a loopback port, speaking HTTP/1.1 as the
 * real one does (kube-apiserver with its watch cache), so that a client can be tested against real
 * shapes over a real socket.
 *
 * <ul>
 *   <li>{@code GET /apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=k=v[,k=v]}:
 *       an {@code EndpointSliceList} ({@code kind}, {@code apiVersion}, {@code metadata.resourceVersion},
 *       {@code items}). Every stored object carries its {@code metadata.resourceVersion}; one counter
 *       for all objects moves with every change, as etcd's revision does.
 *   <li>The same with {@code watch=1}: a chunked {@code application/json} stream, one event per line,
 *       {@code {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}}. It first replays the
 *       changes after {@code resourceVersion} (or, with none or {@code 0}, every current object as
 *       {@code ADDED}), then streams live changes, and ends after {@code timeoutSeconds}.
 *       {@code DELETED} carries the last state of the object under the deletion's resourceVersion.
 *   <li>Bookmarks ({@link #bookmark()}, only to watches that asked with {@code allowWatchBookmarks}): an
 *       object with only {@code kind}, {@code apiVersion} and {@code metadata.resourceVersion} (and the
 *       nil {@code endpoints} and empty {@code addressType} that EndpointSlice's Go type serialises).
 *   <li>410: after {@link #compact()}, a watch from an older resourceVersion gets {@code 200} and one
 *       {@code ERROR} event whose object is a {@code Status} of code 410, reason {@code Expired},
 *       message {@code too old resource version: X (Y)}, and the stream ends; with
 *       {@link #goneAsHttpStatus(boolean)} it gets an HTTP 410 with that Status instead.
 *       {@link #expireWatches()} sends that ERROR event into the open watches.
 *   <li>403 ({@link #forbid(boolean)}) with the RBAC Status the API server sends, 401 for a missing or
 *       wrong bearer token once {@link #requireToken(String)} is set, and any status on the next
 *       requests ({@link #failNext(int, int)}), each with a Status body.
 *   <li>Slow streams: {@link #stallWatches(boolean)} (headers, then nothing, until the client gives up or
 *       the fake closes), {@link #splitEvents(boolean)} (each event in two chunks with a pause between).
 * </ul>
 *
 * <p>Thread-safe; a thread per connection. {@link #close()} ends every stream.
 */
public final class FakeKubernetes implements Closeable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PREFIX = "/apis/discovery.k8s.io/v1/namespaces/";

  /** One request as the fake saw it. */
  public record SeenRequest(String target, String authorization, int status) {}

  private record Event(long rv, String type, ObjectNode object, String namespace) {}

  private final ServerSocket server;
  private final Object lock = new Object();
  // Guarded by lock.
  private final Map<String, Map<String, ObjectNode>> store = new TreeMap<>(); // ns -> name -> object
  private final List<Event> history = new ArrayList<>();
  private long revision = 100;
  private long compactedBelow; // watches from an rv below this get 410
  private final List<Watcher> watchers = new CopyOnWriteArrayList<>();
  private final List<SeenRequest> requests = new CopyOnWriteArrayList<>();
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

  private volatile boolean forbidden;
  private volatile String requiredToken;
  private volatile boolean goneAsHttpStatus;
  private volatile boolean stall;
  private volatile boolean split;
  private volatile int failStatus;
  private volatile int failCount;
  private volatile boolean closed;

  private FakeKubernetes() throws IOException {
    server = new ServerSocket();
    server.setReuseAddress(true);
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    Thread t = new Thread(this::acceptLoop, "fake-kubernetes-accept");
    t.setDaemon(true);
    t.start();
  }

  /** Starts the fake on an ephemeral loopback port. */
  public static FakeKubernetes start() {
    try {
      return new FakeKubernetes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The base URL, e.g. {@code http://127.0.0.1:40123}. */
  public String url() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  // ---------------------------------------------------------------------------------------------
  // State

  /** Stores (creates or replaces) a slice in {@code namespace}: ADDED or MODIFIED to the watches. */
  public long apply(String namespace, EndpointSliceSpec slice) {
    return applyRaw(namespace, slice.toJson(namespace));
  }

  /** Stores any object as a slice (for malformed input); it must have metadata.name and the service label. */
  public long applyRaw(String namespace, ObjectNode object) {
    synchronized (lock) {
      String name = object.path("metadata").path("name").asText();
      Map<String, ObjectNode> ns = store.computeIfAbsent(namespace, k -> new TreeMap<>());
      boolean existed = ns.containsKey(name);
      ObjectNode stored = object.deepCopy();
      long rv = ++revision;
      ((ObjectNode) stored.path("metadata")).put("resourceVersion", Long.toString(rv));
      ns.put(name, stored);
      emit(new Event(rv, existed ? "MODIFIED" : "ADDED", stored, namespace));
      return rv;
    }
  }

  /** Deletes a slice: DELETED to the watches, with its last state. */
  public long delete(String namespace, String name) {
    synchronized (lock) {
      Map<String, ObjectNode> ns = store.getOrDefault(namespace, Map.of());
      ObjectNode gone = ns.remove(name);
      if (gone == null) {
        return revision;
      }
      long rv = ++revision;
      ObjectNode last = gone.deepCopy();
      ((ObjectNode) last.path("metadata")).put("resourceVersion", Long.toString(rv));
      emit(new Event(rv, "DELETED", last, namespace));
      return rv;
    }
  }

  /** Sends a bookmark at the current revision to every watch that allowed bookmarks. */
  public void bookmark() {
    synchronized (lock) {
      ObjectNode o = JSON.createObjectNode();
      o.put("kind", "EndpointSlice");
      o.put("apiVersion", "discovery.k8s.io/v1");
      o.putObject("metadata").put("resourceVersion", Long.toString(revision)).putNull("creationTimestamp");
      o.put("addressType", "");
      o.putNull("endpoints");
      for (Watcher w : watchers) {
        if (w.bookmarks) {
          w.queue.add(line("BOOKMARK", o));
        }
      }
    }
  }

  /** Forgets the history: a watch from any resourceVersion before now gets 410 Gone. */
  public void compact() {
    synchronized (lock) {
      compactedBelow = revision;
      history.clear();
    }
  }

  /** Compacts and sends the 410 ERROR event to every open watch, which then ends. */
  public void expireWatches() {
    synchronized (lock) {
      compact();
      for (Watcher w : watchers) {
        w.queue.add(line("ERROR", status(410, "Expired", "too old resource version: " + w.from + " (" + revision + ")")));
        w.queue.add(END);
      }
    }
  }

  /**
   * Ends every open watch normally, as the server does at timeoutSeconds; events not yet sent (held by
   * {@link #stallWatches}) are lost with it, so the client must resume from what it saw.
   */
  public void endWatches() {
    for (Watcher w : watchers) {
      w.queue.clear();
      w.ended = true;
      w.queue.add(END);
    }
  }

  /** The current revision: the resourceVersion a list would return now. */
  public long revision() {
    synchronized (lock) {
      return revision;
    }
  }

  public int openWatches() {
    return watchers.size();
  }

  public void forbid(boolean on) {
    this.forbidden = on;
  }

  /** Requests must carry {@code Authorization: Bearer token}; others get 401. Null: no check. */
  public void requireToken(String token) {
    this.requiredToken = token;
  }

  public void goneAsHttpStatus(boolean on) {
    this.goneAsHttpStatus = on;
  }

  public void stallWatches(boolean on) {
    this.stall = on;
  }

  public void splitEvents(boolean on) {
    this.split = on;
  }

  /** The next {@code count} requests get {@code status} with a Status body. */
  public void failNext(int status, int count) {
    synchronized (lock) {
      this.failStatus = status;
      this.failCount = count;
    }
  }

  public List<SeenRequest> requests() {
    return List.copyOf(requests);
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // closing
    }
    for (Watcher w : watchers) {
      w.queue.add(END);
    }
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException e) {
        // closing
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // HTTP

  private static final String END = "\u0000end";

  private final class Watcher {
    final String namespace;
    final Map<String, String> selector;
    final boolean bookmarks;
    final long from;
    final BlockingDeque<String> queue = new LinkedBlockingDeque<>();
    volatile boolean ended;

    Watcher(String namespace, Map<String, String> selector, boolean bookmarks, long from) {
      this.namespace = namespace;
      this.selector = selector;
      this.bookmarks = bookmarks;
      this.from = from;
    }
  }

  /** Called under lock. */
  private void emit(Event e) {
    history.add(e);
    for (Watcher w : watchers) {
      if (w.namespace.equals(e.namespace) && matches(e.object, w.selector)) {
        w.queue.add(line(e.type, e.object));
      }
    }
  }

  private static String line(String type, ObjectNode object) {
    ObjectNode event = JSON.createObjectNode();
    event.put("type", type);
    event.set("object", object);
    return event + "\n";
  }

  private static ObjectNode status(int code, String reason, String message) {
    ObjectNode s = JSON.createObjectNode();
    s.put("kind", "Status");
    s.put("apiVersion", "v1");
    s.putObject("metadata");
    s.put("status", "Failure");
    s.put("message", message);
    s.put("reason", reason);
    s.put("code", code);
    return s;
  }

  private static boolean matches(ObjectNode object, Map<String, String> selector) {
    for (Map.Entry<String, String> e : selector.entrySet()) {
      if (!e.getValue().equals(object.path("metadata").path("labels").path(e.getKey()).asText(null))) {
        return false;
      }
    }
    return true;
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket s = server.accept();
        s.setTcpNoDelay(true);
        sockets.add(s);
        Thread t = new Thread(() -> serve(s), "fake-kubernetes-conn");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void serve(Socket socket) {
    try (socket; InputStream in = new BufferedInputStream(socket.getInputStream());
        OutputStream out = socket.getOutputStream()) {
      while (!closed) {
        String requestLine = readLine(in);
        if (requestLine == null || requestLine.isEmpty()) {
          return;
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h = readLine(in); h != null && !h.isEmpty(); h = readLine(in)) {
          int colon = h.indexOf(':');
          if (colon > 0) {
            headers.put(h.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT), h.substring(colon + 1).trim());
          }
        }
        String[] parts = requestLine.split(" ");
        if (parts.length < 3 || !handle(parts[0], parts[1], headers, socket, in, out)) {
          return;
        }
      }
    } catch (IOException e) {
      // the client went away
    } finally {
      sockets.remove(socket);
    }
  }

  /** Serves one request; false if the connection must close afterwards. */
  private boolean handle(String method, String target, Map<String, String> headers, Socket socket, InputStream in,
      OutputStream out) throws IOException {
    String auth = headers.getOrDefault("authorization", "");
    int q = target.indexOf('?');
    String path = q < 0 ? target : target.substring(0, q);
    Map<String, String> query = query(q < 0 ? "" : target.substring(q + 1));
    String token = requiredToken;
    if (token != null && !auth.equals("Bearer " + token)) {
      return respond(out, target, auth, 401, status(401, "Unauthorized", "Unauthorized"));
    }
    synchronized (lock) {
      if (failCount > 0) {
        failCount--;
        int st = failStatus;
        return respond(out, target, auth, st, status(st, st == 429 ? "TooManyRequests" : "InternalError",
            st == 429 ? "Too many requests, please try again later." : "an error on the server"));
      }
    }
    if (!"GET".equals(method) || !path.startsWith(PREFIX) || !path.endsWith("/endpointslices")) {
      return respond(out, target, auth, 404, status(404, "NotFound", "the server could not find the requested resource"));
    }
    String namespace = path.substring(PREFIX.length(), path.length() - "/endpointslices".length());
    boolean watch = "1".equals(query.get("watch")) || "true".equals(query.get("watch"));
    if (forbidden) {
      return respond(out, target, auth, 403, status(403, "Forbidden", "endpointslices.discovery.k8s.io is forbidden:"
          + " User \"system:serviceaccount:" + namespace + ":default\" cannot " + (watch ? "watch" : "list")
          + " resource \"endpointslices\" in API group \"discovery.k8s.io\" in the namespace \"" + namespace + "\""));
    }
    Map<String, String> selector = selector(query.getOrDefault("labelSelector", ""));
    if (!watch) {
      ObjectNode list = JSON.createObjectNode();
      list.put("kind", "EndpointSliceList");
      list.put("apiVersion", "discovery.k8s.io/v1");
      ArrayNode items;
      synchronized (lock) {
        list.putObject("metadata").put("resourceVersion", Long.toString(revision));
        items = list.putArray("items");
        for (ObjectNode o : store.getOrDefault(namespace, Map.of()).values()) {
          if (matches(o, selector)) {
            items.add(o.deepCopy());
          }
        }
      }
      return respond(out, target, auth, 200, list);
    }
    return watch(socket, in, out, target, auth, namespace, selector, query);
  }

  private boolean watch(Socket socket, InputStream in, OutputStream out, String target, String auth, String namespace,
      Map<String, String> selector, Map<String, String> query) throws IOException {
    String rvParam = query.getOrDefault("resourceVersion", "");
    long timeoutSeconds = Math.max(1, parseLong(query.get("timeoutSeconds"), 1800));
    boolean bookmarks = "true".equals(query.get("allowWatchBookmarks"));
    long from = rvParam.isEmpty() || "0".equals(rvParam) ? -1 : parseLong(rvParam, -2);
    Watcher w;
    synchronized (lock) {
      if (from == -2) {
        return respond(out, target, auth, 400, status(400, "BadRequest", "invalid resourceVersion " + rvParam));
      }
      if (from >= 0 && from < compactedBelow) {
        ObjectNode gone = status(410, "Expired", "too old resource version: " + from + " (" + revision + ")");
        if (goneAsHttpStatus) {
          return respond(out, target, auth, 410, gone);
        }
        requests.add(new SeenRequest(target, auth, 200));
        startChunked(out);
        chunk(out, line("ERROR", gone));
        endChunked(out);
        return true;
      }
      w = new Watcher(namespace, selector, bookmarks, from);
      if (from < 0) {
        for (ObjectNode o : store.getOrDefault(namespace, Map.of()).values()) {
          if (matches(o, selector)) {
            w.queue.add(line("ADDED", o));
          }
        }
      } else {
        for (Event e : history) {
          if (e.rv > from && e.namespace.equals(namespace) && matches(e.object, selector)) {
            w.queue.add(line(e.type, e.object));
          }
        }
      }
      watchers.add(w);
    }
    requests.add(new SeenRequest(target, auth, 200));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    try {
      startChunked(out);
      while (!closed) {
        if (stall && !w.ended) {
          // A stalled stream: the connection stays open, nothing is sent, changes are held.
          Thread.sleep(20);
          if (clientGone(socket, in)) {
            return false;
          }
          continue;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        String next = w.queue.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)), TimeUnit.NANOSECONDS);
        if (next == null) {
          if (clientGone(socket, in)) {
            return false; // the client cancelled: the API server ends the watch
          }
          continue;
        }
        if (next == END) {
          break;
        }
        if (stall && !w.ended) {
          w.queue.putFirst(next); // stalled after the poll began: hold it
          continue;
        }
        if (split && next.length() > 2) {
          int half = next.length() / 2;
          chunk(out, next.substring(0, half));
          Thread.sleep(20);
          chunk(out, next.substring(half));
        } else {
          chunk(out, next);
        }
      }
      endChunked(out);
      return !closed;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      watchers.remove(w);
    }
  }

  /** True if the client closed its side: nothing else may come on a watch connection but its end. */
  private static boolean clientGone(Socket socket, InputStream in) {
    try {
      socket.setSoTimeout(1);
      return in.read() < 0;
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    } finally {
      try {
        socket.setSoTimeout(0);
      } catch (IOException e) {
        // closed
      }
    }
  }

  private boolean respond(OutputStream out, String target, String auth, int status, ObjectNode body)
      throws IOException {
    requests.add(new SeenRequest(target, auth, status));
    byte[] bytes = JSON.writeValueAsBytes(body);
    String head = "HTTP/1.1 " + status + " " + reasonPhrase(status) + "\r\n"
        + "Content-Type: application/json\r\n"
        + (status == 429 ? "Retry-After: 1\r\n" : "")
        + "Content-Length: " + bytes.length + "\r\n\r\n";
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(bytes);
    out.flush();
    return true;
  }

  private static void startChunked(OutputStream out) throws IOException {
    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static void chunk(OutputStream out, String data) throws IOException {
    byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
    out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(bytes);
    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static void endChunked(OutputStream out) throws IOException {
    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static String reasonPhrase(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 410 -> "Gone";
      case 429 -> "Too Many Requests";
      case 500 -> "Internal Server Error";
      case 503 -> "Service Unavailable";
      default -> "Status";
    };
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        return b.size() == 0 ? null : b.toString(StandardCharsets.US_ASCII);
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> q = new LinkedHashMap<>();
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      q.put(k, v);
    }
    return q;
  }

  private static Map<String, String> selector(String raw) {
    Map<String, String> s = new LinkedHashMap<>();
    for (String term : raw.split(",")) {
      int eq = term.indexOf('=');
      if (eq > 0) {
        s.put(term.substring(0, eq).trim(), term.substring(eq + 1).replace("=", "").trim());
      }
    }
    return s;
  }

  private static long parseLong(String s, long otherwise) {
    if (s == null) {
      return otherwise;
    }
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      return otherwise;
    }
  }
}
