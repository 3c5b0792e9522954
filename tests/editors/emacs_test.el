;;; emacs_test.el --- ERT test: eglot drives the real quickfill binary  -*- lexical-binding: t; -*-

;; Run (see CMakeLists.txt):
;;   emacs --batch -L editors/emacs -l tests/editors/emacs_test.el
;; Environment: QUICKFILL_BIN (required), QUICKFILL_MODEL (a GGUF file; without
;; it the completion test is skipped).  Exit status: 0 pass, 1 fail, 77 when
;; eglot is missing or a test was skipped.
;;
;; The test registers quickfill with `quickfill-eglot-setup', lets eglot guess
;; the contact for a python-mode buffer from `eglot-server-programs' (so the
;; registration itself is exercised), connects, types into the buffer (eglot
;; sends didChange), then asks `completion-at-point-functions' as
;; `completion-at-point' does and asserts that the server's items are offered;
;; choosing one runs eglot's exit function, which applies the item's textEdit;
;; with a single candidate, `completion-at-point' itself inserts it.

;;; Code:

(require 'ert)
(require 'cl-lib)
(unless (require 'eglot nil t)
  (require 'package)
  (package-activate-all))
(unless (require 'eglot nil t)
  (message "SKIP: eglot is not installed (Emacs 29+ has it built in; Debian: apt install elpa-eglot)")
  (kill-emacs 77))
(require 'python)
(require 'quickfill)
(require 'quickfill-next-edit)

(defvar qf-test-bin (let ((b (getenv "QUICKFILL_BIN")))
                      (and b (not (string-empty-p b)) (file-regular-p b) (file-executable-p b) b)))
(defvar qf-test-model (let ((m (getenv "QUICKFILL_MODEL"))) (and m (not (string-empty-p m)) (file-exists-p m) m)))
(defvar qf-test-wait (/ (string-to-number (or (getenv "QUICKFILL_TEST_WAIT_MS") "300000")) 1000.0)
  "Safety-net timeout in seconds; not a timing assertion.")

(defun qf-test--wait (pred)
  "Run the event loop until PRED returns non-nil or `qf-test-wait' passes."
  (let ((deadline (+ (float-time) qf-test-wait)) v)
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    v))

(defmacro qf-test--with-server (model &rest body)
  "Open sample.py in a fresh directory with quickfill (MODEL or none) attached; run BODY."
  (declare (indent 1))
  `(let* ((dir (file-name-as-directory (make-temp-file "qf-emacs-" t)))
          (file (expand-file-name "sample.py" dir))
          (quickfill-program qf-test-bin)
          (quickfill-model ,model)
          (quickfill-log-level "debug")
          (quickfill-settings '(:completion (:autoDeadlineMs 60000 :explicitDeadlineMs 60000)))
          (eglot-server-programs (copy-sequence eglot-server-programs))
          (eglot-sync-connect t)
          (eglot-connect-timeout (truncate qf-test-wait))
          (eglot-autoshutdown nil)
          (project-find-functions (list (lambda (_d) (cons 'transient dir))))
          (python-indent-guess-indent-offset nil)
          (buf nil)
          (passed nil))
     (with-temp-file file
       (insert "import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n"
               "        return f.read().splitlines()\n\n\ndef main():\n    \n"))
     (quickfill-eglot-setup '(python-mode))
     (setq buf (find-file-noselect file))
     (unwind-protect
         (with-current-buffer buf
           (should (eq major-mode 'python-mode))
           ;; The contact eglot guesses comes from our registration.
           (let ((guess (eglot--guess-contact)))
             (should (eq (nth 2 guess) 'quickfill-eglot-server))
             (apply #'eglot guess))
           (should (qf-test--wait (lambda () (and (eglot-current-server)
                                                  (eglot--server-capable :completionProvider)))))
           (should (cl-typep (eglot-current-server) 'quickfill-eglot-server))
           ,@body
           (setq passed t))
       (with-current-buffer buf
         (let ((server (eglot-current-server)))
           (when server
             (unless passed
               (message "--- server stderr ---\n%s"
                        (if (fboundp 'jsonrpc-stderr-buffer)
                            (with-current-buffer (jsonrpc-stderr-buffer server) (buffer-string))
                          "")))
             (eglot-shutdown server)
             ;; shutdown + exit: the server process ends.
             (should (qf-test--wait (lambda () (not (jsonrpc-running-p server))))))))
       (with-current-buffer buf (set-buffer-modified-p nil))
       (kill-buffer buf))))

(defun qf-test--load-finished ()
  "The quickfill/status answer once the model load has finished, else nil."
  (let ((status (quickfill-status)))
    (and (eq (plist-get status :modelLoading) :json-false) status)))

(ert-deftest quickfill-eglot-initialize ()
  "eglot connects through the registration; without a model completion offers nothing."
  (skip-unless qf-test-bin)
  (qf-test--with-server (expand-file-name "no-such-model.gguf" temporary-file-directory)
    (should (eglot--server-capable :completionProvider :triggerCharacters))
    (should (eglot--server-capable :inlineCompletionProvider))
    (should (memq #'eglot-completion-at-point completion-at-point-functions))
    ;; initializationOptions carried the settings object.
    (should (equal (plist-get (plist-get (eglot-initialization-options (eglot-current-server)) :quickfill)
                              :completion)
                   '(:autoDeadlineMs 60000 :explicitDeadlineMs 60000)))
    (let ((status (qf-test--wait #'qf-test--load-finished)))
      (should status)
      (should (eq (plist-get status :modelLoaded) :json-false)))
    (goto-char (point-min))
    (forward-line 9)
    (end-of-line)
    (insert "print(")
    (pcase-let ((`(,beg ,end ,table . ,_) (run-hook-with-args-until-success 'completion-at-point-functions)))
      (should (null (all-completions (buffer-substring beg end) table))))
    (should (>= (plist-get (quickfill-stats) :noModel) 1))
    ;; The dashboard page from quickfill/report, written where it is opened from.
    (let* ((quickfill-dashboard-file (make-temp-file "quickfill-dashboard" nil ".html"))
           (file (quickfill-write-dashboard))
           (html (with-temp-buffer (insert-file-contents file) (buffer-string))))
      (should (equal file quickfill-dashboard-file))
      (should (string-prefix-p "<!DOCTYPE html>" html))
      (should (string-match-p "<svg id=\"plot-slo-burn\"" html))
      (should (string-match-p "<svg id=\"hist-completion-explicit-totalMs\"" html))
      (delete-file file))
    ;; quickfill-doctor: the real `quickfill doctor' report in its buffer.
    (should (integerp (quickfill-doctor)))
    (with-current-buffer "*quickfill doctor*"
      (should (string-match-p "^quickfill doctor" (buffer-string)))
      (should (string-match-p "kernel level" (buffer-string)))
      (should (string-match-p "problem(s)" (buffer-string))))
    ;; Without a model there is no prompt to explain: an error saying so.
    (let ((err (should-error (quickfill-explain) :type 'jsonrpc-error)))
      (should (string-match-p "no model is loaded" (format "%S" err))))
    ;; The model is on the command line (never in the settings object, which
    ;; the server takes no file path from): quickfill-restart starts a server
    ;; that loads the model quickfill-model names.
    (should (null (plist-get (plist-get (eglot-initialization-options (eglot-current-server)) :quickfill)
                             :model)))
    (when qf-test-model
      (let ((quickfill-model qf-test-model))
        (quickfill-restart)
        (should (member "--model" (quickfill-command)))
        (should (qf-test--wait (lambda ()
                                 (let ((st (quickfill-status)))
                                   (and (eq (plist-get st :modelLoaded) t)
                                        (equal (plist-get st :modelPath) (expand-file-name qf-test-model)))))))))))

;; Privacy (docs/security.md): the globs as the server reads them, and private
;; files in the project that eglot never hands to the quickfill server.
(ert-deftest quickfill-privacy-globs ()
  "Basename patterns at any depth, anchored ones from the start, `**', folders."
  (let ((m (lambda (patterns path) (quickfill-privacy-matching-pattern patterns path "/home/u"))))
    (should (equal (funcall m quickfill-default-exclude "/home/u/p/.env") ".env"))
    (should (equal (funcall m quickfill-default-exclude "/w/p/secrets/db.py") "**/secrets/**"))
    (should (equal (funcall m quickfill-default-exclude "/home/u/.aws/credentials") "**/.aws/credentials"))
    (should-not (funcall m quickfill-default-exclude "/w/src/main.py"))
    (should-not (funcall m quickfill-default-exclude "p/secrets"))
    (should (equal (funcall m '("config/prod/*.yaml") "config/prod/a.yaml") "config/prod/*.yaml"))
    (should-not (funcall m '("config/prod/*.yaml") "x/config/prod/a.yaml"))
    (should (equal (funcall m '("vault/") "a/vault/x.py") "vault/"))
    (should-not (funcall m '("vault/") "a/vault"))
    (should (equal (funcall m '("~/notes.txt") "/home/u/notes.txt") "~/notes.txt"))
    (should-not (funcall m '("a.b") "axb"))))

(ert-deftest quickfill-eglot-private-files ()
  "A .env and a file matching `quickfill-exclude' are never managed for quickfill, so never sent."
  (skip-unless qf-test-bin)
  (let ((quickfill-exclude '("local_secret.py")))
    (qf-test--with-server (expand-file-name "no-such-model.gguf" temporary-file-directory)
      ;; The option also reaches the server, which adds it to its own list.
      (should (equal (plist-get (plist-get (plist-get (eglot-initialization-options (eglot-current-server))
                                                      :quickfill)
                                           :privacy)
                                :exclude)
                     ["local_secret.py"]))
      (let* ((dir (file-name-directory buffer-file-name))
             (env (expand-file-name ".env" dir))
             (secret (expand-file-name "local_secret.py" dir))
             (bufs nil))
        (with-temp-file env (insert "API_KEY=sk-live-EMACSSECRET\n"))
        (with-temp-file secret (insert "TOKEN = 'EMACSSECRET2'\n"))
        (unwind-protect
            (progn
              (push (find-file-noselect secret) bufs)
              (push (find-file-noselect env) bufs)
              (with-current-buffer (car bufs) (python-mode))  ; a mode quickfill serves
              (dolist (b bufs)
                (with-current-buffer b
                  (should (eq major-mode 'python-mode))
                  (should (quickfill-private-reason))
                  (should-not eglot--managed-mode)))
              ;; The server holds only sample.py.
              (should (= (plist-get (quickfill-status) :openDocuments) 1)))
          (dolist (b bufs)
            (with-current-buffer b (set-buffer-modified-p nil))
            (kill-buffer b)))))))

(ert-deftest quickfill-eglot-next-edit ()
  "quickfill/nextEdit answers through eglot; an edit is shown as an overlay at its
target, jumped to and accepted, and the acceptance reaches quickfill/stats."
  (skip-unless qf-test-bin)
  (skip-unless qf-test-model)
  (qf-test--with-server qf-test-model
    (should (eq (plist-get (qf-test--wait #'qf-test--load-finished) :modelLoaded) t))
    ;; Any model can be asked with a forced prompt format.
    (let ((quickfill-settings '(:completion (:autoDeadlineMs 60000 :explicitDeadlineMs 60000)
                                :nextEdit (:format "sweep" :maxTokens 32))))
      (quickfill-update-settings))
    (goto-char (point-min))
    (forward-line 9)
    (end-of-line)
    (let ((answer (quickfill-next-edit-request)))
      (should (stringp (plist-get answer :id)))
      (should (equal (plist-get answer :format) "sweep"))
      (should (vectorp (plist-get answer :edits))))
    ;; An answer in the protocol's shape: "pass" after the indentation of line 10.
    (quickfill-next-edit-clear)
    (goto-char (point-min))
    (let ((answer (list :id "emacs-test-1" :version 1 :format "sweep"
                        :edits (vector (list :range (list :start (list :line 9 :character 4)
                                                          :end (list :line 9 :character 4))
                                             :newText "pass" :atCursor :json-false)))))
      (should (= (quickfill-next-edit-show answer t) 1))
      (let ((ovs (cl-remove-if-not (lambda (o) (overlay-get o 'quickfill-next-edit)) (overlays-in (point-min) (point-max)))))
        (should (= (length ovs) 1))
        (should (equal (overlay-get (car ovs) 'after-string) "pass")))
      (should (quickfill-next-edit-jump))
      (should (equal (buffer-substring (line-beginning-position) (point)) "    "))
      (should (quickfill-next-edit-accept))
      (should (equal (buffer-substring (line-beginning-position) (line-end-position)) "    pass"))
      (should-not (cl-some (lambda (o) (overlay-get o 'quickfill-next-edit)) (overlays-in (point-min) (point-max))))
      ;; Shown again and then the buffer changes: the overlay goes, nothing is accepted.
      (should (= (quickfill-next-edit-show (plist-put (copy-sequence answer) :id "emacs-test-2") t) 1))
      (insert "x")
      (should-not (quickfill-next-edit-accept)))
    (let* ((acc (plist-get (quickfill-stats) :acceptance))
           (ne (plist-get (plist-get (plist-get acc :bySource) :nextEdit) :explicit)))
      (should (= (plist-get ne :shown) 2))
      (should (= (plist-get ne :accepted) 1))
      (should (= (plist-get ne :acceptedChars) 4)))))

(ert-deftest quickfill-eglot-completion-at-point ()
  "completion-at-point offers the server's items; choosing one applies its textEdit."
  (skip-unless qf-test-bin)
  (skip-unless qf-test-model)
  (qf-test--with-server qf-test-model
    (let ((status (qf-test--wait #'qf-test--load-finished)))
      (should status)
      (should (eq (plist-get status :modelLoaded) t)))
    ;; M-x quickfill-explain at the end of "    " in main().
    (goto-char (point-min))
    (forward-line 9)
    (end-of-line)
    (let* ((e (call-interactively #'quickfill-explain))
           (parts (append (plist-get e :parts) nil))
           (text (with-current-buffer "*quickfill-explain*" (buffer-string))))
      (should (string-match-p "\\`quickfill prompt: [^ ]+ format, [0-9]+ tokens in [0-9]+ parts" text))
      (should (string-match-p (concat "\nprefix +[0-9]+  " (regexp-quote (eglot--path-to-uri buffer-file-name))) text))
      (should (string-match-p "\nconfidence gate, automatic triggers: -?[0-9.]+ ([a-z]" text))
      (should (string-match-p (regexp-quote "----- prompt -----\n") text))
      (should (string-match-p (regexp-quote "def read_lines(path):\n    with open(path) as f:") text))
      (should (with-current-buffer "*quickfill-explain*" buffer-read-only))
      (should (= (apply #'+ (mapcar (lambda (p) (plist-get p :tokens)) parts)) (plist-get e :tokens)))
      (should (equal (mapconcat (lambda (p) (plist-get p :text)) parts "") (plist-get e :prompt)))
      (should (string-match-p (regexp-quote (format " %d tokens" (plist-get e :tokens))) text)))
    ;; Type "print(" at the end of main's body, one character at a time.
    (goto-char (point-min))
    (forward-line 9)
    (end-of-line)
    (dolist (c (string-to-list "print("))
      (insert c)
      (accept-process-output nil 0.001))
    (should (equal (buffer-substring (line-beginning-position) (point)) "    print("))
    (let* ((line-before (buffer-substring (line-beginning-position) (line-end-position)))
           (capf (run-hook-with-args-until-success 'completion-at-point-functions)))
      (should capf)
      (pcase-let ((`(,beg ,end ,table . ,props) capf))
        (let ((cands (all-completions (buffer-substring beg end) table)))
          (message "candidates: %S" cands)
          (should (> (length cands) 0))
          (let* ((choice (car cands))
                 (item (get-text-property 0 'eglot--lsp-item choice))
                 (edit (plist-get item :textEdit))
                 (range (plist-get edit :range))
                 (new-text (plist-get edit :newText)))
            (should (stringp new-text))
            (should (> (length new-text) 0))
            (should (= (plist-get (plist-get range :start) :line) 9))
            ;; What completion-in-region does with the chosen candidate, then
            ;; eglot's exit function (which replaces it by the textEdit).
            (let ((s (plist-get (plist-get range :start) :character))
                  (e (plist-get (plist-get range :end) :character)))
              (delete-region beg end)
              (goto-char beg)
              (insert choice)
              (funcall (plist-get props :exit-function) choice 'finished)
              (let ((first-line (car (split-string new-text "\n")))
                    (line-after (save-excursion
                                  (goto-char (point-min))
                                  (forward-line 9)
                                  (buffer-substring (line-beginning-position) (line-end-position)))))
                (should (string-prefix-p (concat (substring line-before 0 s) first-line) line-after))
                (ignore e)))))))
    ;; The command itself: with a single candidate, `completion-at-point'
    ;; inserts it and eglot applies its textEdit (with several it would show
    ;; the *Completions* list, which batch mode cannot click).
    (goto-char (point-min))
    (forward-line 9)
    (delete-region (point) (line-end-position))
    (insert "    print(")
    (let* ((line-before (buffer-substring (line-beginning-position) (point)))
           (capf (run-hook-with-args-until-success 'completion-at-point-functions))
           (cands (all-completions (buffer-substring (nth 0 capf) (nth 1 capf)) (nth 2 capf))))
      (when (= (length cands) 1)
        (let* ((edit (plist-get (get-text-property 0 'eglot--lsp-item (car cands)) :textEdit))
               (first-line (car (split-string (plist-get edit :newText) "\n"))))
          (should (completion-at-point))
          (message "completion-at-point inserted: %S"
                   (save-excursion (goto-char (point-min)) (forward-line 9)
                                   (buffer-substring (line-beginning-position) (line-end-position))))
          (should (string-prefix-p (concat line-before first-line)
                                   (save-excursion
                                     (goto-char (point-min))
                                     (forward-line 9)
                                     (buffer-substring (line-beginning-position) (line-end-position))))))))
    ;; The request shows up in quickfill/stats, and the menus listed and the
    ;; candidates chosen above in its acceptance counts.
    (should (>= (plist-get (quickfill-stats) :answered) 1))
    ;; The completion sources: the one implicit local source, metered, and its summary line.
    (let* ((stats (quickfill-stats))
           (src (aref (plist-get stats :sources) 0))
           (summary (quickfill-sources-summary stats (quickfill-status))))
      (message "completion sources: %S" summary)
      (should (equal (plist-get src :name) "local"))
      (should (>= (plist-get src :requests) 1))
      (should (= (length summary) 1))
      (should (string-match-p "\\`local (local, ok): [0-9]+ requests?, 0 errors, [0-9]+\\+[0-9]+ tokens"
                              (car summary))))
    (let ((c (plist-get (plist-get (plist-get (plist-get (quickfill-stats) :acceptance) :bySource) :completion)
                        :automatic)))
      (message "completion acceptance: %S" c)
      (should (>= (plist-get c :shown) 1))
      (should (>= (plist-get c :accepted) 1)))
    ;; quickfill-complete inserts the best suggestion; the cycle command
    ;; replaces it by each other candidate in turn, then the first again.
    (goto-char (point-min))
    (forward-line 9)
    (delete-region (point) (line-end-position))
    (insert "    ")
    (let* ((start (point))
           (first (quickfill-complete))
           (seen (list first))
           (shown first))
      (should (stringp first))
      (should (equal (buffer-substring start (point)) first))
      (catch 'round
        (dotimes (_ 16)
          (setq shown (quickfill-next-candidate))
          (should (equal (buffer-substring start (point)) shown))
          (when (equal shown first) (throw 'round t))
          (should-not (member shown seen))
          (push shown seen)))
      (should (equal shown first))
      (message "quickfill-complete cycled through %d suggestion(s), first %S" (length seen) first)
      ;; The next command keeps the first characters (at most 2) and deletes
      ;; the rest: a partial acceptance (reported after that command).
      (when (> (length first) 1)
        (delete-region (+ start (min 2 (1- (length first)))) (point))
        (quickfill--inline-settle)
        (let ((c (plist-get (plist-get (plist-get (plist-get (quickfill-stats) :acceptance) :bySource) :inline)
                            :explicit)))
          (message "inline acceptance: %S" c)
          (should (>= (plist-get c :shown) (length seen)))
          (should (= (plist-get c :partlyAccepted) 1))
          (should (= (plist-get c :acceptedChars) (min 2 (1- (length first))))))))))

(defvar qf-test-source-dir
  (file-name-directory (directory-file-name (file-name-directory (directory-file-name
                                                                   (file-name-directory load-file-name)))))
  "The source tree (this file is tests/editors/emacs_test.el).")

(defun qf-test--fill-places (dir port user-file)
  "Fill the @PORT@, @USER_FILE@ and @REPO@ places of the files copied into DIR."
  (dolist (f (directory-files-recursively dir "" nil nil t))
    (when (file-regular-p f)
      (with-temp-file f
        (insert-file-contents f)
        (dolist (pair `(("@PORT@" . ,(number-to-string port)) ("@USER_FILE@" . ,user-file)
                        ("@REPO@" . ,(directory-file-name dir))))
          (goto-char (point-min))
          (while (search-forward (car pair) nil t) (replace-match (cdr pair) t t)))))))

(ert-deftest quickfill-eglot-hostile-dir-locals ()
  "A repository's .dir-locals.el sets eglot-workspace-configuration (applied
without asking: eglot marks it safe) with a remote source on a loopback port
that records every connection, a key from the environment, an audit log on a
file of the user's and a planted model.  eglot sends it to the server, which
takes none of it and tells the user."
  (skip-unless qf-test-bin)
  (let* ((root (file-name-as-directory (make-temp-file "qf-emacs-hostile-" t)))
         (dir (file-name-as-directory (expand-file-name "repo" root)))
         (user-file (expand-file-name "home/.bashrc" root))
         (user-text "# the user's shell startup file\nexport PATH=$HOME/bin:$PATH\n")
         (connections nil)
         (recorder (make-network-process :name "qf-recorder" :server t :host "127.0.0.1" :service t
                                         :family 'ipv4 :noquery t
                                         :log (lambda (_server client _msg) (push client connections))
                                         :filter (lambda (_p _s) nil)))
         (port (process-contact recorder :service))
         (process-environment (append (list (concat "XDG_CONFIG_HOME=" (expand-file-name "config" root))
                                            "QF_HOSTILE_SECRET=s3cr3t-of-the-user"
                                            "QUICKFILL_NO_DAEMON=1")
                                      process-environment))
         (quickfill-program qf-test-bin)
         (quickfill-model nil)
         (quickfill-settings '(:completion (:autoDeadlineMs 60000 :explicitDeadlineMs 60000)))
         (eglot-server-programs (copy-sequence eglot-server-programs))
         (eglot-sync-connect t)
         (eglot-connect-timeout (truncate qf-test-wait))
         (eglot-autoshutdown nil)
         (enable-local-variables t)           ; Emacs's default: safe variables without asking
         (project-find-functions (list (lambda (_d) (cons 'transient dir))))
         (python-indent-guess-indent-offset nil)
         (buf nil))
    (copy-directory (expand-file-name "tests/security/hostile_repo" qf-test-source-dir) dir nil t t)
    (copy-file (expand-file-name "models/quickfill-tiny-code.gguf" qf-test-source-dir)
               (expand-file-name "models/planted.gguf" dir) t)
    (make-directory (file-name-directory user-file) t)
    (with-temp-file user-file (insert user-text))
    (qf-test--fill-places dir port user-file)
    (with-current-buffer (get-buffer-create "*Messages*") (let ((inhibit-read-only t)) (erase-buffer)))
    (quickfill-eglot-setup '(python-mode))
    (unwind-protect
        (progn
          (setq buf (find-file-noselect (expand-file-name "sample.py" dir)))
          (with-current-buffer buf
            ;; The repository's setting is in force in the buffer, without a prompt.
            (should (plist-get (plist-get eglot-workspace-configuration :quickfill) :sources))
            (apply #'eglot (eglot--guess-contact))
            (should (qf-test--wait (lambda () (eglot--server-capable :completionProvider))))
            (should (qf-test--wait #'qf-test--load-finished))
            ;; eglot sent it; the server refused the privileged keys and said so.
            (should (qf-test--wait
                     (lambda ()
                       (with-current-buffer "*Messages*"
                         (save-excursion
                           (goto-char (point-min))
                           (search-forward "ignored settings that only the user config file may set: model, completion.draftModel, sources, audit.path, audit.includeCode" nil t))))))
            ;; Completions, explicit, go to the local model only.
            (goto-char (point-max))
            (insert "print(")
            (pcase-let ((`(,beg ,end ,table . ,_) (run-hook-with-args-until-success 'completion-at-point-functions)))
              (all-completions (buffer-substring beg end) table))
            (let* ((status (quickfill-status))
                   (sources (plist-get status :sources)))
              (should (= (length sources) 1))
              (should (equal (plist-get (aref sources 0) :name) "local"))
              (should-not (string-match-p "planted" (or (plist-get status :modelPath) ""))))
            (accept-process-output nil 0.5)
            (should (null connections))
            (should (equal (with-temp-buffer (insert-file-contents user-file) (buffer-string)) user-text))))
      (when buf
        (with-current-buffer buf
          (let ((server (eglot-current-server)))
            (when server
              (eglot-shutdown server)
              (should (qf-test--wait (lambda () (not (jsonrpc-running-p server)))))))
          (set-buffer-modified-p nil))
        (kill-buffer buf))
      (delete-process recorder)
      (delete-directory root t))))

(defun qf-test-run ()
  "Run the tests; exit 0 (pass), 1 (failure) or 77 (something was skipped)."
  (let ((stats (ert-run-tests-batch t)))
    (kill-emacs (cond ((> (ert-stats-completed-unexpected stats) 0) 1)
                      ((> (ert-stats-skipped stats) 0)
                       (message "SKIP: %s" (if qf-test-bin
                                               "no model file (set QUICKFILL_MODEL)"
                                             "QUICKFILL_BIN is not set to an executable quickfill binary"))
                       77)
                      (t 0)))))

(when noninteractive (qf-test-run))

;;; emacs_test.el ends here
