package dev.fairway.lb.testing;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
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
 * else, so a request counted here is one that reached the server. Accepted sockets have
 * TCP_NODELAY; every blocking read has a timeout; {@link #close} ends every connection.
 *
 * <p>One copy for every client module's tests (lb-core's test-jar), so a fault means the same bytes
 * for OkHttp, the JDK client and HttpClient 5. It also counts the connections the client closed while
 * the server held them ({@link #closedByClient}), which shows whether a cancel really ended the
 * exchange.
 */
public final class FaultServer implements AutoCloseable {
  public static final String CALL_HEADER = "X-Call";
  /** Pause between the slow body's bytes: well under the clients' 500 ms read timeout. */
  public static final long SLOW_BYTE_MILLIS = 30;
  public static final String SLOW_BODY = "slow-body!"; // 10 bytes
  /** The load report {@link Behaviour#HEALTHY_WITH_LOAD_REPORT} and {@link Behaviour#UNAVAILABLE} send. */
  public static final String LOAD_REPORT = "TEXT application_utilization=0.5, named_metrics.rif=3";
  /** How long the server that never answers holds a connection at most (the client gives up first). */
  private static final int HOLD_MILLIS = 10_000;

  /** What the server does once it has read a request. */
  public enum Behaviour {
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
    /** 200 "ok" with the {@link #LOAD_REPORT} in {@code endpoint-load-metrics}, keep-alive. */
    HEALTHY_WITH_LOAD_REPORT,
    /** 503 with body "unavailable" and the {@link #LOAD_REPORT}, keep-alive. */
    UNAVAILABLE,
    /** 200 with a {@value #BIG_BODY_BYTES}-byte body (more than a client buffers at once), keep-alive. */
    BIG_BODY
  }

  /** The size of {@link Behaviour#BIG_BODY}'s body. */
  public static final int BIG_BODY_BYTES = 100_000;

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
  private final AtomicInteger closedByClient = new AtomicInteger();
  private volatile boolean closed;

  private FaultServer(Behaviour behaviour) throws IOException {
    this.behaviour = behaviour;
    this.listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
  }

  public static FaultServer start(Behaviour behaviour) throws IOException {
    FaultServer server = new FaultServer(behaviour);
    server.pool.execute(server::acceptLoop);
    return server;
  }

  /** A loopback port nothing listens on (bound a moment ago, then released): connections are refused. */
  public static int refusedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** How many times the request of call {@code id} arrived whole. */
  public int received(String id) {
    AtomicInteger n = received.get(id);
    return n == null ? 0 : n.get();
  }

  /** Requests received whole whose call id starts with {@code prefix}. */
  public int receivedWithPrefix(String prefix) {
    int sum = 0;
    for (Map.Entry<String, AtomicInteger> e : received.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        sum += e.getValue().get();
      }
    }
    return sum;
  }

  /** Requests received whole, of every call. */
  public int receivedTotal() {
    return receivedWithPrefix("");
  }

  /** Connections held without an answer ({@link Behaviour#HEADERS_NEVER_COME}) that the client closed. */
  public int closedByClient() {
    return closedByClient.get();
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
      case HEALTHY_WITH_LOAD_REPORT -> {
        write(out, "HTTP/1.1 200 OK\r\nendpoint-load-metrics: " + LOAD_REPORT + "\r\nContent-Length: 2\r\n\r\nok");
        return true;
      }
      case UNAVAILABLE -> {
        write(out, "HTTP/1.1 503 Service Unavailable\r\nendpoint-load-metrics: " + LOAD_REPORT
            + "\r\nContent-Length: 11\r\n\r\nunavailable");
        return true;
      }
      case BIG_BODY -> {
        write(out, "HTTP/1.1 200 OK\r\nContent-Length: " + BIG_BODY_BYTES + "\r\n\r\n" + "x".repeat(BIG_BODY_BYTES));
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
          if (!closed) {
            closedByClient.incrementAndGet(); // end of stream: the client closed the connection
          }
        } catch (SocketTimeoutException e) {
          // The hold time ran out: the client kept the connection open.
        } catch (IOException e) {
          if (!closed) {
            closedByClient.incrementAndGet(); // reset by the client
          }
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
