package dev.fairway.lb.hc5;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A raw HTTP/1.1 server on a loopback socket that misbehaves in one chosen way, written by hand
 * where MockWebServer would hide the exact bytes: it reads each request whole (head and {@code
 * Content-Length} body) and counts it by its {@value #CALL_HEADER} header before it does anything
 * else (lb-okhttp's test server of the same name, with three more behaviours), so a request counted here is one that reached the server. Accepted sockets have
 * TCP_NODELAY; every blocking read has a timeout; {@link #close} ends every connection.
 */
final class FaultServer implements AutoCloseable {
  static final String CALL_HEADER = "X-Call";
  /** Pause between the slow body's bytes: well under the clients' 500 ms read timeout. */
  static final long SLOW_BYTE_MILLIS = 30;
  static final String SLOW_BODY = "slow-body!"; // 10 bytes
  /** How long the server that never answers holds a connection at most (the client gives up first). */
  private static final int HOLD_MILLIS = 10_000;

  /** What the server does once it has read a request. */
  enum Behaviour {
    /** 200 with body "ok", keep-alive. */
    HEALTHY,
    /** Closes with SO_LINGER 0 at once: a TCP reset before any response byte. */
    RESET_BEFORE_RESPONSE,
    /** Sends the head of a 200 promising 100 bytes and 4 of them, waits 100 ms, then resets. */
    RESET_AFTER_HEADERS,
    /** Sends the head of a 200 promising 100 bytes, 10 of them, and closes (FIN). */
    TRUNCATED_BODY,
    /** Sends nothing, until the client gives up or 10 s pass. */
    HEADERS_NEVER_COME,
    /** Sends a status line that is not HTTP and closes. */
    GARBAGE_STATUS_LINE,
    /** 503 with {@code Connection: close} and a body, then closes. */
    UNAVAILABLE_AND_CLOSE,
    /** 200 whose 10-byte body comes a byte every {@value #SLOW_BYTE_MILLIS} ms, keep-alive. */
    SLOW_BODY,
    /** 200 "ok" without {@code Connection: close}, then closes quietly: the client pools a dead connection. */
    CLOSE_AFTER_RESPONSE,
    /** 503 with a body, keep-alive. */
    UNAVAILABLE,
    /** 200 "ok" with an {@code endpoint-load-metrics} report, keep-alive. */
    HEALTHY_WITH_LOAD_REPORT,
    /** 200 with a {@value #BIG_BODY_BYTES}-byte body (more than the handler buffers), keep-alive. */
    BIG_BODY
  }

  /** The size of {@link Behaviour#BIG_BODY}'s body. */
  static final int BIG_BODY_BYTES = 100_000;

  private final Behaviour behaviour;
  private final ServerSocket listener;
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "fault-server");
    t.setDaemon(true);
    return t;
  });
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  /** Times each call id was received whole. */
  private final Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private FaultServer(Behaviour behaviour) throws IOException {
    this.behaviour = behaviour;
    this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
  }

  static FaultServer start(Behaviour behaviour) throws IOException {
    FaultServer server = new FaultServer(behaviour);
    server.pool.execute(server::acceptLoop);
    return server;
  }

  /** A loopback port nothing listens on (bound a moment ago, then released): connections are refused. */
  static int refusedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  int port() {
    return listener.getLocalPort();
  }

  /** How many times the request of call {@code id} arrived whole. */
  int received(String id) {
    AtomicInteger n = received.get(id);
    return n == null ? 0 : n.get();
  }

  /** Requests received whole, whatever their call id. */
  int total() {
    int sum = 0;
    for (AtomicInteger n : received.values()) {
      sum += n.get();
    }
    return sum;
  }

  /** Requests received whole whose call id starts with {@code prefix}. */
  int receivedWithPrefix(String prefix) {
    int sum = 0;
    for (Map.Entry<String, AtomicInteger> e : received.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        sum += e.getValue().get();
      }
    }
    return sum;
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket socket = listener.accept();
        socket.setTcpNoDelay(true);
        open.add(socket);
        pool.execute(() -> serve(socket));
      } catch (IOException | java.util.concurrent.RejectedExecutionException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      socket.setSoTimeout(HOLD_MILLIS);
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      while (!closed) {
        String id = readRequest(in);
        if (id == null) {
          return; // the client closed the connection
        }
        received.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
        if (!respond(socket, in, out)) {
          return;
        }
      }
    } catch (IOException e) {
      // The client went away or timed out: nothing to answer.
    } finally {
      open.remove(socket);
    }
  }

  /** Answers one request; false when the connection ends after it. */
  private boolean respond(Socket socket, InputStream in, OutputStream out) throws IOException {
    switch (behaviour) {
      case HEALTHY -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        return true;
      }
      case RESET_BEFORE_RESPONSE -> {
        socket.setSoLinger(true, 0);
        return false;
      }
      case RESET_AFTER_HEADERS -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart");
        // A reset at once can overtake the head in the client's receive buffer; give it time to read.
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        socket.setSoLinger(true, 0);
        return false;
      }
      case TRUNCATED_BODY -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nten bytes!");
        socket.shutdownOutput();
        return false;
      }
      case HEADERS_NEVER_COME -> {
        try {
          while (in.read() >= 0) {
            // Discard until the client closes, or the hold time ends the read.
          }
        } catch (IOException e) {
          // Timed out or reset: either way the connection ends.
        }
        return false;
      }
      case GARBAGE_STATUS_LINE -> {
        write(out, "HELLO there, this is not HTTP\r\n\r\n");
        return false;
      }
      case UNAVAILABLE_AND_CLOSE -> {
        write(out, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 12\r\n\r\nunavailable\n");
        return false;
      }
      case SLOW_BODY -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: " + SLOW_BODY.length() + "\r\n\r\n");
        for (int i = 0; i < SLOW_BODY.length(); i++) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(SLOW_BYTE_MILLIS));
          if (closed) {
            return false;
          }
          write(out, SLOW_BODY.substring(i, i + 1));
        }
        return true;
      }
      case CLOSE_AFTER_RESPONSE -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        return false;
      }
      case UNAVAILABLE -> {
        write(out, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 12\r\n\r\nunavailable\n");
        return true;
      }
      case HEALTHY_WITH_LOAD_REPORT -> {
        write(out, "HTTP/1.1 200 OK\r\nendpoint-load-metrics: TEXT application_utilization=0.5\r\nContent-Length: 2\r\n\r\nok");
        return true;
      }
      case BIG_BODY -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: " + BIG_BODY_BYTES + "\r\n\r\n" + "x".repeat(BIG_BODY_BYTES));
        return true;
      }
      default -> throw new AssertionError(behaviour);
    }
  }

  private static void write(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  /** Reads one request whole; its call id ("" if it has none), or null at the end of the stream. */
  private static String readRequest(InputStream in) throws IOException {
    String requestLine = readLine(in);
    if (requestLine == null) {
      return null;
    }
    String id = "";
    long length = 0;
    for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
      int colon = line.indexOf(':');
      if (colon <= 0) {
        continue;
      }
      String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).trim();
      if (name.equals(CALL_HEADER.toLowerCase(Locale.ROOT))) {
        id = value;
      } else if (name.equals("content-length")) {
        length = Long.parseLong(value);
      }
    }
    for (long left = length; left > 0; left--) {
      if (in.read() < 0) {
        throw new SocketException("request body cut short");
      }
    }
    return id;
  }

  /** A CRLF-terminated line without its end, or null at the end of the stream before any byte. */
  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b = in.read(); ; b = in.read()) {
      if (b < 0) {
        return line.length() == 0 ? null : line.toString();
      }
      if (b == '\n') {
        int end = line.length();
        return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
      }
      line.append((char) b);
    }
  }

  @Override
  public void close() throws IOException, InterruptedException {
    closed = true;
    listener.close();
    for (Socket s : open) {
      s.close();
    }
    pool.shutdownNow();
    if (!pool.awaitTermination(5, TimeUnit.SECONDS)) {
      throw new IllegalStateException("fault server threads still running after 5 s");
    }
  }
}
