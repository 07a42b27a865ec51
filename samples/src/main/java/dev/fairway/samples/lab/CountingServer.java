package dev.fairway.samples.lab;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A minimal HTTP/1.1 server on a loopback port that counts the TCP connections it accepts, for
 * {@link Scenario#SUBSET}: the count is the server's own {@code accept()} calls, so it is what the
 * backend really holds, not what a client believes it opened. One thread accepts; each connection
 * gets a thread of its own that answers keep-alive requests in turn ({@code 200}, header
 * {@value Backend#BACKEND_HEADER}) until the client closes it. The JDK's {@code HttpServer}, which
 * {@link Backend} uses, does not expose its accept count.
 *
 * <p>What it parses: the request line and headers up to the blank line (at most 16 KiB), then a
 * {@code Content-Length} body, which it discards; {@code Connection: close} ends the connection after
 * the response. Anything else (chunked bodies, pipelining beyond what keep-alive gives) is out of scope:
 * the lab's OkHttp client sends neither.
 *
 * <p>Accepted sockets get {@code TCP_NODELAY}. {@link #close()} closes the listener and every open
 * connection and waits up to a second for the threads.
 */
final class CountingServer implements AutoCloseable {
  private static final int MAX_HEAD = 16 * 1024;

  private final int index;
  private final long serviceNanos;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final AtomicInteger accepted = new AtomicInteger();
  private final LongAdder served = new LongAdder();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private final byte[] response;
  private volatile boolean closed;

  private CountingServer(int index, long serviceNanos) throws IOException {
    this.index = index;
    this.serviceNanos = serviceNanos;
    byte[] body = ("backend-" + index + "\n").getBytes(StandardCharsets.US_ASCII);
    this.response = (String.format(Locale.ROOT, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s: %d\r\n"
        + "Content-Type: text/plain\r\n\r\nbackend-%d\n", body.length, Backend.BACKEND_HEADER, index, index))
        .getBytes(StandardCharsets.US_ASCII);
    this.listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    this.acceptor = new Thread(this::acceptLoop, "counting-server-" + index + "-accept");
    acceptor.setDaemon(true);
  }

  /** Starts backend {@code index} (1-based, for the header) on a port the OS picks. */
  static CountingServer start(int index, long serviceNanos) throws IOException {
    CountingServer s = new CountingServer(index, serviceNanos);
    s.acceptor.start();
    return s;
  }

  int port() {
    return listener.getLocalPort();
  }

  int index() {
    return index;
  }

  /** TCP connections accepted since start. */
  int accepted() {
    return accepted.get();
  }

  /** Requests answered with 200 since start (counted as the answer is written). */
  long served() {
    return served.sum();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket s;
      try {
        s = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      accepted.incrementAndGet();
      open.add(s);
      // A small stack: the run without a subset holds a connection per client on every server.
      Thread t = new Thread(null, () -> serve(s), "counting-server-" + index + "-conn", 256 * 1024);
      t.setDaemon(true);
      threads.add(t);
      t.start();
      if (closed) {
        closeQuietly(s);
      }
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      socket.setTcpNoDelay(true);
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      while (!closed) {
        Head head = readHead(in);
        if (head == null) {
          return; // the client closed the connection
        }
        in.skipNBytes(head.contentLength); // EOFException if cut short
        if (serviceNanos > 0) {
          long deadline = System.nanoTime() + serviceNanos;
          for (long left = serviceNanos; left > 0; left = deadline - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
          }
        }
        // Counted before the write: a client that has read its answer must find it counted, and the
        // lab reads the counts as soon as its clients are done.
        served.increment();
        out.write(response);
        out.flush();
        if (head.close) {
          return;
        }
      }
    } catch (IOException e) {
      // a reset or a close during shutdown: the connection is over either way
    } finally {
      open.remove(socket);
      threads.remove(Thread.currentThread());
    }
  }

  private record Head(long contentLength, boolean close) {}

  /** Reads up to the blank line; null at end of stream before a request began. */
  private static Head readHead(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    long contentLength = 0;
    boolean close = false;
    boolean first = true;
    int total = 0;
    while (true) {
      int c = in.read();
      if (c < 0) {
        if (first && line.length() == 0) {
          return null;
        }
        throw new IOException("request cut short");
      }
      if (++total > MAX_HEAD) {
        throw new IOException("request head above " + MAX_HEAD + " bytes");
      }
      if (c == '\r') {
        continue;
      }
      if (c != '\n') {
        line.append((char) c);
        continue;
      }
      if (line.length() == 0) {
        return new Head(contentLength, close);
      }
      if (!first) {
        String h = line.toString();
        int colon = h.indexOf(':');
        if (colon > 0) {
          String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
          String value = h.substring(colon + 1).trim();
          if (name.equals("content-length")) {
            try {
              contentLength = Long.parseLong(value);
            } catch (NumberFormatException e) {
              throw new IOException("bad Content-Length " + value, e);
            }
          } else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
            close = true;
          }
        }
      }
      first = false;
      line.setLength(0);
    }
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(listener);
    for (Socket s : open) {
      closeQuietly(s);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    try {
      acceptor.join(TimeUnit.NANOSECONDS.toMillis(Math.max(1, deadline - System.nanoTime())));
      for (Thread t : threads) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // closing on shutdown: nothing left to do with it
    }
  }
}
