import Dispatch
import Foundation
import HealthExtract
import HealthModel

/// The thread that owns one run's `health.sqlite`: the connection is used from this thread only.
///
/// Inserting a table's rows costs about as much as writing its CSV, and no stage needs the
/// database, so the tables' writers hand their rows over (`post`) and go on; only values cross
/// threads. The whole file is one transaction without a journal and without syncs (the staged
/// file is thrown away if the run fails), synced once when complete and swapped in with the
/// other outputs. A problem with a row is kept and reported by the close.
final class DatabaseThread {
  enum Message: Sendable {
    /// A new table, its instants in `zone`; its number is the count of tables created before it.
    case create(DatabaseTable, zone: ZoneRules)
    /// Rows of table number `table`, one field per declared column, row after row.
    case rows(table: Int, fields: [Field])
    /// Creates the indexes, commits and syncs the file.
    case close
    /// Ends the thread without finishing the file.
    case stop
  }

  /// What the file holds once written.
  struct Summary: Sendable {
    var tables: [(name: String, rows: Int)]
  }

  /// Messages in flight: a writer that is ahead waits rather than piling rows up in memory.
  static let depth = 16

  private let channel = Channel()
  private var ended = false

  /// Starts the thread and waits until it has created the file and its `columns` table.
  init(path: String) throws(SQLiteError) {
    let channel = channel
    let thread = Thread {
      do throws(SQLiteError) {
        let summary = try Self.write(path: path, channel: channel)
        if let summary {
          try Self.sync(path)
          channel.reply(.closed(summary))
        }
      } catch {
        channel.reply(.failed(error))
      }
      channel.ended.signal()
    }
    thread.start()
    if case .failed(let error) = channel.answer() {
      ended = true
      channel.ended.wait()
      throw error
    }
  }

  /// Everything the thread does with the connection, so that the connection and its statements
  /// are closed when it returns; nil when stopped.
  private static func write(path: String, channel: Channel) throws(SQLiteError) -> Summary? {
    let database = try SQLiteDatabase(path: path)
    // No journal and no syncs while staging: a run that fails throws the file away.
    try database.execute(
      "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE; "
        + "PRAGMA cache_size = -16384; BEGIN")
    try database.execute(ColumnsTable.createStatement)
    let describe = try database.prepare(ColumnsTable.insertStatement)
    channel.reply(.ready)
    var tables: [DatabaseTable] = []
    var inserts: [SQLiteStatement] = []
    var converters: [DatabaseRowValues] = []
    var rows: [Int] = []
    var values: [SQLiteValue] = []
    var failure: SQLiteError?
    while true {
      switch channel.next() {
      case .create(let table, let zone):
        tables.append(table)
        rows.append(0)
        converters.append(DatabaseRowValues(columns: table.columns, zone: zone))
        guard failure == nil else { continue }
        do throws(SQLiteError) {
          try database.execute(table.createStatement)
          for row in ColumnsTable.rows(of: table) { try describe.run(row) }
          inserts.append(try database.prepare(table.insertStatement))
        } catch {
          failure = error
        }
      case .rows(let table, let fields):
        guard failure == nil else { continue }
        let width = tables[table].columns.count
        guard width > 0 else { continue }
        var start = fields.startIndex
        do throws(SQLiteError) {
          while start + width <= fields.endIndex {
            values.removeAll(keepingCapacity: true)
            converters[table].append(fields[start..<(start + width)], to: &values)
            try inserts[table].run(values)
            rows[table] += 1
            start += width
          }
        } catch {
          failure = error
        }
      case .close:
        if let failure { throw failure }
        for table in tables { for statement in table.indexStatements { try database.execute(statement) } }
        try database.execute("COMMIT")
        return Summary(tables: zip(tables, rows).map { ($0.name, $1) })
      case .stop:
        return nil
      }
    }
  }

  /// The file's one sync, after the connection is closed.
  private static func sync(_ path: String) throws(SQLiteError) {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0, fsync(descriptor) == 0 else {
      let code = errno
      if descriptor >= 0 { close(descriptor) }
      throw .open(path: path, code: code, message: String(cString: strerror(code)))
    }
    close(descriptor)
  }

  /// Hands a message over; waits only while `depth` messages are in flight.
  func post(_ message: Message) {
    guard !ended else { return }
    channel.send(message)
  }

  /// Asks for the file to be finished, without waiting.
  func startClosing() { post(.close) }

  /// Waits for the file started by `startClosing`; the thread has ended when this returns.
  func closed() throws(SQLiteError) -> Summary {
    precondition(!ended, "the database was closed or stopped already")
    ended = true
    let answer = channel.answer()
    channel.ended.wait()
    switch answer {
    case .closed(let summary): return summary
    case .failed(let error): throw error
    case .ready: preconditionFailure("the database thread answered a close as if it had just started")
    }
  }

  /// A run that fails leaves the database unfinished; the thread is waited for either way.
  deinit {
    guard !ended else { return }
    channel.send(.stop)
    channel.ended.wait()
  }

  /// What the thread says back: it is ready, or the file is written, or why not.
  enum Answer: Sendable {
    case ready
    case closed(Summary)
    case failed(SQLiteError)
  }

  /// Messages one way (bounded), answers the other.
  private final class Channel: Sendable {
    private let messages = HandOffQueue<Message>(capacity: DatabaseThread.depth)
    /// Two answers at most: ready (or failed), then closed (or failed).
    private let answers = HandOffQueue<Answer>(capacity: 2)
    let ended = DispatchSemaphore(value: 0)

    func send(_ message: Message) { messages.put(message) }

    func next() -> Message { messages.take() }

    func reply(_ answer: Answer) { answers.put(answer) }

    func answer() -> Answer { answers.take() }
  }
}
